//! Configuration: the SDK's `LICENSING_*` variables, named profiles in the user's config
//! directory, and the global flags; flags win over the environment, which wins over the
//! profile. Secrets (the tokens and the appKey) live in a separate file that only its
//! owner may read, and are never printed.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use clap::ArgMatches;

use crate::{error::CliError, terminal::escape};

/// Profile keys, each the lower-case name of a `LICENSING_*` variable; `secret` keys go
/// to the secrets file.
pub const KEYS: &[(&str, bool)] = &[
    ("order_url", false),
    ("member_url", false),
    ("sandbox_url", false),
    ("timeout", false),
    ("connect_timeout", false),
    ("deadline", false),
    ("retry", false),
    ("max_attempts", false),
    ("ca_file", false),
    ("max_reply_bytes", false),
    ("proxy", false),
    ("app_token", true),
    ("client_token", true),
    ("user_token", true),
    ("sandbox_token", true),
    ("app_key", true),
];

/// Operation parameters that hold a secret: (the spec's name, the variable that gives it
/// when the flag does not). The flag is then optional, `-` reads it from stdin, and the
/// profile key of the variable's name gives it too.
pub const PARAM_VARS: &[(&str, &str)] = &[("appKey", "LICENSING_APP_KEY")];

/// The variable that gives the operation parameter `wire`, if it is a secret one.
pub fn param_var(wire: &str) -> Option<&'static str> {
    PARAM_VARS.iter().find(|(w, _)| *w == wire).map(|(_, v)| *v)
}

/// The profile key of a `LICENSING_*` variable.
fn profile_key(var: &str) -> String {
    var.strip_prefix("LICENSING_")
        .unwrap_or(var)
        .to_ascii_lowercase()
}

/// The usage error for a secret parameter that no flag, variable or profile gives.
pub fn missing_param(wire: &str, flag: &str, var: &str) -> CliError {
    CliError::usage(format!(
        "{wire} is required: --{flag} - (reads stdin), {var}, or the profile's {}",
        profile_key(var)
    ))
}

/// One line of stdin, without its line ending, for a secret given as `-`.
fn stdin_line(flag: &str) -> Result<String, CliError> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| CliError::usage(format!("--{flag} -: cannot read stdin: {e}")))?;
    let value = line.trim_end_matches(['\n', '\r']);
    if value.trim().is_empty() {
        return Err(CliError::usage(format!(
            "--{flag} -: stdin gave an empty line"
        )));
    }
    Ok(value.to_string())
}

/// Global flags that set a variable: (flag, variable).
pub const FLAG_VARS: &[(&str, &str)] = &[
    ("order-url", "LICENSING_ORDER_URL"),
    ("member-url", "LICENSING_MEMBER_URL"),
    ("sandbox-url", "LICENSING_SANDBOX_URL"),
    ("timeout", "LICENSING_TIMEOUT"),
    ("deadline", "LICENSING_DEADLINE"),
    ("retry", "LICENSING_RETRY"),
];

fn var_name(key: &str) -> String {
    format!("LICENSING_{}", key.to_ascii_uppercase())
}

fn is_secret(key: &str) -> Option<bool> {
    KEYS.iter().find(|(k, _)| *k == key).map(|(_, s)| *s)
}

/// The directory of `config.toml` and `credentials.toml`: `LICENSING_CONFIG_DIR`, or
/// `licensing` under the user's config directory (`~/.config/licensing` on Linux).
pub fn config_dir() -> Result<PathBuf, CliError> {
    if let Some(dir) = std::env::var_os("LICENSING_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    dirs::config_dir()
        .map(|d| d.join("licensing"))
        .ok_or_else(|| CliError::usage("no config directory: set LICENSING_CONFIG_DIR"))
}

/// Profiles: `[profiles.<name>]` tables of key = "value".
type Profiles = BTreeMap<String, BTreeMap<String, String>>;

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct File {
    #[serde(default)]
    profiles: Profiles,
}

fn read_file(path: &Path, secret: bool) -> Result<Profiles, CliError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Profiles::new()),
        Err(e) => {
            return Err(CliError::usage(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    if secret {
        check_private(path)?;
    }
    let file: File = toml::from_str(&text)
        .map_err(|e| CliError::usage(format!("{}: {}", path.display(), e.message())))?;
    for (name, settings) in &file.profiles {
        for key in settings.keys() {
            match is_secret(key) {
                None => {
                    return Err(CliError::usage(format!(
                        "{}: profile {name}: unknown key `{key}` (known: {})",
                        path.display(),
                        KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
                    )));
                }
                Some(s) if s != secret => {
                    let place = if s { "credentials.toml" } else { "config.toml" };
                    return Err(CliError::usage(format!(
                        "{}: profile {name}: `{key}` belongs in {place}",
                        path.display()
                    )));
                }
                Some(_) => {}
            }
        }
    }
    Ok(file.profiles)
}

/// Refuses a secrets file that anyone but its owner can read or write.
#[cfg(unix)]
fn check_private(path: &Path) -> Result<(), CliError> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(path)
        .map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(CliError::usage(format!(
            "refusing to read {}: it holds tokens and is accessible to others (mode {:o}); \
             run `chmod 600 {}`",
            path.display(),
            mode & 0o777,
            path.display()
        )));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_: &Path) -> Result<(), CliError> {
    Ok(())
}

fn write_file(path: &Path, profiles: &Profiles, secret: bool) -> Result<(), CliError> {
    use std::io::Write as _;
    let text = toml::to_string(&File {
        profiles: profiles.clone(),
    })
    .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
    let failed =
        |e: std::io::Error| CliError::usage(format!("cannot write {}: {e}", path.display()));
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(failed)?;
    // Written to a new file beside the target and renamed over it, so a reader never sees
    // half a file. The new file's name is random and it is created exclusively, so a file
    // or a symlink someone else planted beside the target (as `credentials.toml.tmp` once
    // was) is neither written through nor followed; the rename replaces a symlink at the
    // target itself rather than writing where it points.
    let prefix = format!(
        ".{}.",
        path.file_stem().unwrap_or_default().to_string_lossy()
    );
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        // Given at creation, so the umask still applies to the settings file.
        builder.permissions(std::fs::Permissions::from_mode(if secret {
            0o600
        } else {
            0o644
        }));
    }
    let mut temp = builder.tempfile_in(dir).map_err(failed)?;
    if secret {
        check_private_file(temp.as_file(), path)?;
    }
    temp.write_all(text.as_bytes()).map_err(failed)?;
    temp.as_file().sync_all().map_err(failed)?;
    temp.persist(path).map_err(|e| failed(e.error))?;
    sync_dir(dir);
    Ok(())
}

/// Refuses to write tokens to a file others could read: the temporary file is created
/// private, and a file system that does not keep the mode (some network and FAT mounts)
/// must not receive them.
#[cfg(unix)]
fn check_private_file(file: &std::fs::File, path: &Path) -> Result<(), CliError> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = file
        .metadata()
        .map_err(|e| CliError::usage(format!("cannot write {}: {e}", path.display())))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(CliError::usage(format!(
            "refusing to write {}: its file system made the new file accessible to others \
             (mode {:o})",
            path.display(),
            mode & 0o777
        )));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private_file(_: &std::fs::File, _: &Path) -> Result<(), CliError> {
    Ok(())
}

/// Makes a rename in `dir` durable. Best effort: the file is complete either way, and a
/// crash before the directory reaches the disk leaves the previous version.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Where every setting comes from, and the clients built from them.
pub struct Context {
    flags: BTreeMap<&'static str, String>,
    profile_name: Option<String>,
    profile: BTreeMap<String, String>,
}

impl Context {
    /// Reads the global flags, the environment and the selected profile: `--profile`,
    /// else `LICENSING_PROFILE`, else `default` if it exists.
    pub fn load(matches: &ArgMatches) -> Result<Self, CliError> {
        Self::load_from(matches, matches.get_one::<String>("profile").cloned())
    }

    /// As [`Context::load`], but `--profile` is left to the command (`sandbox tenant
    /// create` writes the profile it names): `LICENSING_PROFILE`, else `default`.
    pub fn load_without_profile_flag(matches: &ArgMatches) -> Result<Self, CliError> {
        Self::load_from(matches, None)
    }

    fn load_from(matches: &ArgMatches, flag: Option<String>) -> Result<Self, CliError> {
        let mut flags = BTreeMap::new();
        for (flag, var) in FLAG_VARS {
            if let Some(value) = matches.get_one::<String>(flag) {
                flags.insert(*var, value.clone());
            }
        }
        let chosen = flag.or_else(|| env_var("LICENSING_PROFILE"));
        let (profile_name, profile) = match chosen {
            Some(name) => {
                let profile = load_profile(&name)?.ok_or_else(|| {
                    CliError::usage(format!(
                        "no profile named `{name}` (see `licensing profile list`)"
                    ))
                })?;
                (Some(name), profile)
            }
            None => match load_profile("default")? {
                Some(profile) => (Some("default".to_string()), profile),
                None => (None, BTreeMap::new()),
            },
        };
        Ok(Self {
            flags,
            profile_name,
            profile,
        })
    }

    /// A `LICENSING_*` variable: from a flag, the environment, or the profile.
    pub fn var(&self, name: &str) -> Option<String> {
        if let Some(v) = self.flags.get(name) {
            return Some(v.clone());
        }
        if let Some(v) = env_var(name) {
            return Some(v);
        }
        name.strip_prefix("LICENSING_")?;
        self.profile.get(&profile_key(name)).cloned()
    }

    /// The `appKey` of `batchOrder` (and of `licensing orders submit`): the flag's value
    /// if given (`-` reads one line of stdin), else `LICENSING_APP_KEY` (from the
    /// environment or the profile's `app_key`); a usage error otherwise. Never printed.
    pub fn app_key(&self, flag: Option<&str>) -> Result<String, CliError> {
        self.secret_param("appKey", "app-key", flag)?
            .ok_or_else(|| missing_param("appKey", "app-key", "LICENSING_APP_KEY"))
    }

    /// A parameter [`PARAM_VARS`] lists, named `wire` on the wire and `--flag` on the
    /// command line: the flag's value (`-` reads one line of stdin), else its variable.
    pub fn secret_param(
        &self,
        wire: &str,
        flag: &str,
        value: Option<&str>,
    ) -> Result<Option<String>, CliError> {
        match value {
            Some("-") => stdin_line(flag).map(Some),
            Some(value) => Ok(Some(value.to_string())),
            None => Ok(param_var(wire)
                .and_then(|var| self.var(var))
                .filter(|v| !v.trim().is_empty())),
        }
    }

    fn hint(&self, error: licensing_sdk::Error) -> CliError {
        let mut cli = CliError::from(error);
        if cli.message.contains("is not set") {
            let from = match &self.profile_name {
                Some(name) => format!(" or in profile `{name}`"),
                None => ", or a profile (`licensing profile add`)".to_string(),
            };
            cli.message = format!("{} (set it in the environment{from})", cli.message);
        }
        cli
    }

    fn user_agent() -> String {
        concat!("licensing-cli/", env!("CARGO_PKG_VERSION")).to_string()
    }

    /// The order service's client.
    pub fn order_client(&self) -> Result<licensing_sdk::order::Client, CliError> {
        licensing_sdk::order::Client::builder_from_vars(|n| self.var(n))
            .and_then(|b| b.user_agent(Self::user_agent()).build())
            .map_err(|e| self.hint(e))
    }

    /// The member center's client.
    pub fn member_client(&self) -> Result<licensing_sdk::member::Client, CliError> {
        licensing_sdk::member::Client::builder_from_vars(|n| self.var(n))
            .and_then(|b| b.user_agent(Self::user_agent()).build())
            .map_err(|e| self.hint(e))
    }

    /// The sandbox admin client: `LICENSING_SANDBOX_URL` (default: the order service's
    /// URL, where the simulator serves it too) and `LICENSING_SANDBOX_TOKEN`, if the
    /// simulator was started with an admin token.
    pub fn sandbox_client(&self) -> Result<licensing_sandbox_client::Client, CliError> {
        let url = self
            .var("LICENSING_SANDBOX_URL")
            .or_else(|| self.var("LICENSING_ORDER_URL"))
            .ok_or_else(|| {
                CliError::usage(
                    "LICENSING_SANDBOX_URL is not set (nor LICENSING_ORDER_URL): the simulator's address",
                )
            })?;
        let token = self.var("LICENSING_SANDBOX_TOKEN");
        let builder = reqwest::Client::builder()
            .user_agent(Self::user_agent())
            .connect_timeout(std::time::Duration::from_secs(10));
        licensing_sandbox_client::client_with(url.trim_end_matches('/'), token.as_deref(), builder)
            .map_err(|e| CliError::usage(format!("sandbox client: {e}")))
    }
}

/// An environment variable; empty counts as unset, as for the SDK.
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn load_profile(name: &str) -> Result<Option<BTreeMap<String, String>>, CliError> {
    let dir = config_dir()?;
    let mut settings = read_file(&dir.join("config.toml"), false)?;
    let found = settings.contains_key(name);
    let mut profile = settings.remove(name).unwrap_or_default();
    // The secrets file is read only when it has something for this profile to give.
    let secrets_path = dir.join("credentials.toml");
    if secrets_path.exists() {
        let mut secrets = read_file(&secrets_path, true)?;
        if let Some(tokens) = secrets.remove(name) {
            profile.extend(tokens);
            return Ok(Some(profile));
        }
    }
    Ok(found.then_some(profile))
}

/// Whether a profile named `name` exists, with settings or tokens or both.
pub fn profile_exists(name: &str) -> Result<bool, CliError> {
    Ok(load_profile(name)?.is_some())
}

/// Adds `values` (profile keys of [`KEYS`]) to the profile `name`, the secret ones to the
/// owner-only secrets file, as `licensing profile add` does.
pub fn save_profile(name: &str, values: &[(&str, String)]) -> Result<(), CliError> {
    let dir = config_dir()?;
    let mut settings = read_file(&dir.join("config.toml"), false)?;
    let mut secrets = read_file(&dir.join("credentials.toml"), true)?;
    for (key, value) in values {
        let secret = is_secret(key).expect("a key of KEYS");
        let target = if secret { &mut secrets } else { &mut settings };
        target
            .entry(name.to_string())
            .or_default()
            .insert((*key).to_string(), value.clone());
    }
    store(&dir, name, &settings, &secrets)
}

/// Writes the settings and, when `name` has any, the secrets; says where.
fn store(dir: &Path, name: &str, settings: &Profiles, secrets: &Profiles) -> Result<(), CliError> {
    // The profile exists once it has any setting, tokens included.
    let mut settings = settings.clone();
    settings.entry(name.to_string()).or_default();
    write_file(&dir.join("config.toml"), &settings, false)?;
    if secrets.contains_key(name) {
        write_file(&dir.join("credentials.toml"), secrets, true)?;
    }
    eprintln!(
        "profile `{}` saved in {}",
        escape(name),
        escape(&dir.display().to_string())
    );
    Ok(())
}

/// `licensing profile add|list|show|remove`.
pub fn profile_command(matches: &ArgMatches) -> Result<(), CliError> {
    let dir = config_dir()?;
    let config_path = dir.join("config.toml");
    let secrets_path = dir.join("credentials.toml");
    match matches.subcommand() {
        Some(("add", m)) => {
            let name = m.get_one::<String>("name").expect("required").clone();
            let mut settings = read_file(&config_path, false)?;
            let mut secrets = read_file(&secrets_path, true)?;
            let mut given: Vec<(String, String)> = Vec::new();
            for (key, _) in KEYS {
                if let Ok(Some(v)) = m.try_get_one::<String>(&key.replace('_', "-")) {
                    given.push((key.to_string(), v.clone()));
                }
            }
            for pair in m.get_many::<String>("set").into_iter().flatten() {
                let (key, value) = pair
                    .split_once('=')
                    .ok_or_else(|| CliError::usage(format!("--set {pair}: expected KEY=VALUE")))?;
                given.push((key.trim().to_string(), value.to_string()));
            }
            if given.is_empty() {
                return Err(CliError::usage(
                    "nothing to set: give --order-url, --app-token, --set KEY=VALUE, …",
                ));
            }
            let mut stdin_read = false;
            for (key, mut value) in given {
                let secret = is_secret(&key).ok_or_else(|| {
                    CliError::usage(format!(
                        "unknown key `{key}` (known: {})",
                        KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
                    ))
                })?;
                if secret && value == "-" {
                    if stdin_read {
                        return Err(CliError::usage("only one secret can be read from stdin"));
                    }
                    stdin_read = true;
                    let mut line = String::new();
                    std::io::stdin().read_line(&mut line)?;
                    value = line.trim().to_string();
                }
                let target = if secret { &mut secrets } else { &mut settings };
                target.entry(name.clone()).or_default().insert(key, value);
            }
            store(&dir, &name, &settings, &secrets)
        }
        Some(("list", _)) => {
            let mut names: Vec<String> = read_file(&config_path, false)?.into_keys().collect();
            if secrets_path.exists() {
                names.extend(read_file(&secrets_path, true)?.into_keys());
            }
            names.sort();
            names.dedup();
            for name in names {
                println!("{}", escape(&name));
            }
            Ok(())
        }
        Some(("show", m)) => {
            let name = m
                .get_one::<String>("name")
                .cloned()
                .or_else(|| std::env::var("LICENSING_PROFILE").ok())
                .unwrap_or_else(|| "default".to_string());
            let profile = load_profile(&name)?
                .ok_or_else(|| CliError::usage(format!("no profile named `{name}`")))?;
            println!("[{}]", escape(&name));
            for (key, secret) in KEYS {
                if let Some(value) = profile.get(*key) {
                    // A secret is never printed, not even in part.
                    let shown = if *secret {
                        "(set, hidden)".into()
                    } else {
                        escape(value)
                    };
                    println!("{key} = {shown}");
                }
            }
            Ok(())
        }
        Some(("remove", m)) => {
            let name = m.get_one::<String>("name").expect("required");
            let mut settings = read_file(&config_path, false)?;
            let mut secrets = if secrets_path.exists() {
                read_file(&secrets_path, true)?
            } else {
                Profiles::new()
            };
            let in_settings = settings.remove(name).is_some();
            let in_secrets = secrets.remove(name).is_some();
            if !in_settings && !in_secrets {
                return Err(CliError::usage(format!(
                    "no profile named `{name}` (see `licensing profile list`)"
                )));
            }
            if in_settings {
                write_file(&config_path, &settings, false)?;
            }
            if in_secrets {
                write_file(&secrets_path, &secrets, true)?;
            }
            eprintln!(
                "profile `{}` removed from {}",
                escape(name),
                escape(&dir.display().to_string())
            );
            Ok(())
        }
        _ => unreachable!("clap requires a subcommand"),
    }
}

/// The variable a profile key stands for (shown in `licensing profile add --help`).
pub fn key_help(key: &str) -> String {
    var_name(key)
}
