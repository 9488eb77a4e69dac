//! What a signal does to a run: the first SIGINT, SIGTERM or SIGHUP stops it sending
//! anything but undos, which then run; a second ends the process at once, leaving the
//! ledger for `licensing probe --finish`.

use std::sync::Arc;

use super::http::Http;
use crate::error::{CliError, exit};

/// Starts listening: the task that stops `http` on the first signal, with the signal's
/// exit code.
pub fn watch(
    http: Arc<Http>,
    ledger: Option<String>,
) -> Result<tokio::task::JoinHandle<()>, CliError> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let on = |kind: SignalKind| {
            signal(kind).map_err(|e| CliError::usage(format!("cannot handle signals: {e}")))
        };
        let mut all = [
            (on(SignalKind::interrupt())?, exit::INTERRUPTED, "SIGINT"),
            (on(SignalKind::terminate())?, exit::TERMINATED, "SIGTERM"),
            (on(SignalKind::hangup())?, exit::HANGUP, "SIGHUP"),
        ];
        Ok(tokio::spawn(async move {
            let (code, name) = next(&mut all).await;
            http.stop(format!("stopped by {name}"), code);
            let (second, name) = next(&mut all).await;
            let finish = ledger.map_or_else(String::new, |l| {
                format!(
                    ": `licensing probe --finish {}` undoes what is left",
                    crate::terminal::escape(&l)
                )
            });
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("error: stopped by a second signal ({name}) while undoing{finish}\n")
                    .as_bytes(),
            );
            std::process::exit(i32::from(second));
        }))
    }
    #[cfg(not(unix))]
    {
        let _ = ledger;
        Ok(tokio::spawn(async move {
            let _ = tokio::signal::ctrl_c().await;
            http.stop("stopped by Ctrl-C".into(), exit::INTERRUPTED);
        }))
    }
}

#[cfg(unix)]
async fn next(
    all: &mut [(tokio::signal::unix::Signal, u8, &'static str); 3],
) -> (u8, &'static str) {
    let [(int, a, an), (term, b, bn), (hup, c, cn)] = all;
    tokio::select! {
        _ = int.recv() => (*a, *an),
        _ = term.recv() => (*b, *bn),
        _ = hup.recv() => (*c, *cn),
    }
}
