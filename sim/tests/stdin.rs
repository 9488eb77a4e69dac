//! `--exit-on-stdin-close`: the binary started with a pipe on its standard input stops,
//! cleanly (its journal written), once the pipe's other end is closed, as it is when the
//! parent holding it ends however it ends; without the flag an end of input changes
//! nothing.

use std::{
    fs,
    io::{Read, Write},
    net::TcpStream,
    path::Path,
    process::{Child, ChildStdin, Command, ExitStatus, Stdio},
    thread,
    time::{Duration, Instant},
};

use licensing_sdk::operations;
use licensing_sim::{DEFAULT_APP_TOKEN, JOURNAL_DIR_VARIABLE};
use licensing_test_support::process::listening_url;

/// The binary on a free port with `flags`, its journal going to `journal`, once it has said
/// where it listens: the child, its stdin's pipe and its address.
fn start(flags: &[&str], journal: &Path) -> (Child, ChildStdin, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_licensing-sim"))
        .args(["--addr", "127.0.0.1:0"])
        .args(flags)
        .env(JOURNAL_DIR_VARIABLE, journal)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = listening_url(&mut child);
    let addr = url.strip_prefix("http://").unwrap_or(&url).to_string();
    let stdin = child.stdin.take().unwrap();
    (child, stdin, addr)
}

/// The child's exit status, or `None` when it is still running after `limit`.
fn exited_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        thread::sleep(Duration::from_millis(20));
    }
    None
}

/// One `allocateShellNums` over a socket of its own: whether the simulator answers it
/// with success (which also gives the journal an entry to write). Each simulator is
/// called once, so one `g_nonce` serves.
fn allocates(addr: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return false;
    };
    let body = br#"{"size":1}"#;
    write!(
        stream,
        "POST {}?g_nonce=stdin-test HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {DEFAULT_APP_TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        operations::ALLOCATE_SHELL_NUMS.path,
        body.len()
    )
    .unwrap();
    stream.write_all(body).unwrap();
    let mut reply = String::new();
    stream.take(64 * 1024).read_to_string(&mut reply).unwrap();
    reply.starts_with("HTTP/1.1 200") && reply.contains(r#""code":0"#)
}

#[test]
fn with_the_flag_closing_stdin_stops_the_simulator_cleanly() {
    let journal = tempfile::tempdir().unwrap();
    let (mut child, mut stdin, addr) = start(&["--exit-on-stdin-close"], journal.path());
    // What a parent writes is read and dropped: only the end of input stops it.
    stdin.write_all(b"anything\n").unwrap();
    assert!(allocates(&addr));
    drop(stdin);
    let Some(status) = exited_within(&mut child, Duration::from_secs(10)) else {
        child.kill().unwrap();
        panic!("still running 10 s after its stdin was closed");
    };
    assert!(status.success(), "{status}");
    let written = fs::read_dir(journal.path()).unwrap().count();
    assert_eq!(written, 1, "a clean stop writes the journal");
}

#[test]
fn without_the_flag_the_end_of_stdin_changes_nothing() {
    let journal = tempfile::tempdir().unwrap();
    let (mut child, stdin, addr) = start(&[], journal.path());
    drop(stdin);
    let status = exited_within(&mut child, Duration::from_secs(1));
    assert!(allocates(&addr));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        status, None,
        "stopped when its stdin closed, without the flag"
    );
}
