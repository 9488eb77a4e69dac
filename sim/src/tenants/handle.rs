//! Tenants as the library hands them out: what to create one with ([`TenantOptions`]),
//! what comes back ([`Tenant`]: its id, base URL and tokens) and why creating one failed
//! ([`TenantError`]).

use std::{fmt, io, time::Duration};

use super::{Entry, MAX_TENANT_TTL};
use crate::{
    sandbox::{AdminError, client as admin},
    state::Region,
};

/// What a new tenant starts with ([`Simulator::tenant_with`](crate::Simulator::tenant_with));
/// every part is optional.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use licensing_sim::{Simulator, TenantOptions, admin};
///
/// let sim = Simulator::start().await?;
/// let demo = admin::builtin_seed("demo").expect("built in");
/// let tenant = sim.tenant_with(
///     TenantOptions::new().name("worker-3").seed(demo).ttl(Duration::from_secs(600)),
/// )?;
/// println!("{} serves both services", tenant.url());
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct TenantOptions {
    pub(crate) name: Option<String>,
    pub(crate) seed: Option<admin::types::Seed>,
    pub(crate) region: Option<Region>,
    pub(crate) ttl: Option<Duration>,
}

impl TenantOptions {
    /// An empty tenant in the domestic region, kept until idle for the simulator's
    /// default time to live.
    pub fn new() -> Self {
        Self::default()
    }

    /// A name for people (a branch, a test worker), shown in lists: at most 100
    /// characters, no control characters.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// A seed loaded into the tenant before it is handed out; one the services refuse
    /// part-way creates no tenant.
    pub fn seed(mut self, seed: admin::types::Seed) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The region marker of its asset numbers (default [`Region::Domestic`]).
    pub fn region(mut self, region: Region) -> Self {
        self.region = Some(region);
        self
    }

    /// How long it is kept without a request under its prefix (default
    /// [`SimulatorBuilder::tenant_ttl`](crate::SimulatorBuilder::tenant_ttl)); from 1
    /// second to [`MAX_TENANT_TTL`](crate::MAX_TENANT_TTL), counted in whole seconds.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    pub(crate) fn checked_ttl(&self, default: Duration) -> Result<Duration, TenantError> {
        let Some(ttl) = self.ttl else {
            return Ok(default);
        };
        let ttl = Duration::from_secs(ttl.as_secs());
        if ttl.is_zero() || ttl > MAX_TENANT_TTL {
            return Err(TenantError::invalid(
                "ttl",
                format!(
                    "must be from 1 to {} seconds (30 days)",
                    MAX_TENANT_TTL.as_secs()
                ),
            ));
        }
        Ok(ttl)
    }

    pub(crate) fn checked_name(&self) -> Result<Option<String>, TenantError> {
        let Some(name) = &self.name else {
            return Ok(None);
        };
        if name.chars().count() > 100 {
            return Err(TenantError::invalid(
                "name",
                "must be at most 100 characters",
            ));
        }
        if name.chars().any(char::is_control) {
            return Err(TenantError::invalid(
                "name",
                "must not hold control characters",
            ));
        }
        Ok(Some(name.clone()))
    }
}

/// Why a tenant could not be created. Nothing of it is left behind.
#[derive(Debug)]
#[non_exhaustive]
pub enum TenantError {
    /// The simulator holds as many tenants as it takes
    /// ([`SimulatorBuilder::max_tenants`](crate::SimulatorBuilder::max_tenants)).
    Full {
        /// The most it takes.
        max: usize,
    },
    /// An option, or the seed, breaks a rule.
    Invalid {
        /// Where: `ttl`, `name`, or the seed's field by its path.
        field: Option<String>,
        /// The rule.
        message: String,
    },
    /// Its files could not be written (with a state file), or the system's random
    /// source failed.
    Io(io::Error),
}

impl TenantError {
    fn invalid(field: &str, message: impl Into<String>) -> Self {
        TenantError::Invalid {
            field: Some(field.to_string()),
            message: message.into(),
        }
    }
}

impl fmt::Display for TenantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TenantError::Full { max } => write!(
                f,
                "the simulator holds {max} tenants, the most it takes (--max-tenants, \
                 SimulatorBuilder::max_tenants): delete one, or wait until one is idle past \
                 its time to live"
            ),
            TenantError::Invalid {
                field: Some(field),
                message,
            } => write!(f, "{field}: {message}"),
            TenantError::Invalid {
                field: None,
                message,
            } => f.write_str(message),
            TenantError::Io(e) => write!(f, "the tenant could not be created: {e}"),
        }
    }
}

impl std::error::Error for TenantError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TenantError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for TenantError {
    fn from(e: io::Error) -> Self {
        TenantError::Io(e)
    }
}

impl From<AdminError> for TenantError {
    fn from(e: AdminError) -> Self {
        if e.status.is_client_error() {
            TenantError::Invalid {
                field: e.field,
                message: e.message,
            }
        } else {
            TenantError::Io(io::Error::other(e.message))
        }
    }
}

/// A tenant of a running simulator: a sandbox of its own, serving both services and the
/// admin API under its base URL ([`Tenant::url`], the simulator's URL and `/t/{id}`), to
/// its own tokens only. It holds none of the tenant's state: dropping it leaves the
/// tenant be, which lives until it is deleted or left idle past its time to live.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use licensing_sdk::order;
/// use licensing_sim::Simulator;
///
/// let sim = Simulator::start().await?;
/// let tenant = sim.tenant()?;
/// let orders = order::Client::builder(tenant.url())
///     .application_token(tenant.app_token())
///     .build()?;
/// tenant.admin().reset().send().await?; // its state alone
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Tenant {
    id: String,
    url: String,
    tokens: super::Tokens,
    seeded: Option<admin::types::SeedResult>,
}

/// Tokens stay out of logs.
impl fmt::Debug for Tenant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tenant")
            .field("id", &self.id)
            .field("url", &self.url)
            .field("tokens", &self.tokens)
            .finish_non_exhaustive()
    }
}

impl Tenant {
    pub(crate) fn new(
        simulator_url: &str,
        entry: &Entry,
        seeded: Option<admin::types::SeedResult>,
    ) -> Self {
        Self {
            id: entry.id.clone(),
            url: format!("{simulator_url}/t/{}", entry.id),
            tokens: entry.tokens.clone(),
            seeded,
        }
    }

    /// Its id: 32 lowercase hexadecimal digits, 128 bits from the system's random source.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The base URL to give the SDK's client builders and the admin client:
    /// `http://127.0.0.1:41234/t/{id}`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The application token its order service accepts.
    pub fn app_token(&self) -> &str {
        &self.tokens.app
    }

    /// The client token its member center accepts (`Authorization` and `clientToken`).
    pub fn client_token(&self) -> &str {
        &self.tokens.client
    }

    /// The user token its member center accepts (`userToken`).
    pub fn user_token(&self) -> &str {
        &self.tokens.user
    }

    /// The token its admin API requires (always, whatever the simulator's own).
    pub fn admin_token(&self) -> &str {
        &self.tokens.admin
    }

    /// What its seed made ([`TenantOptions::seed`]), if it was given one.
    pub fn seeded(&self) -> Option<&admin::types::SeedResult> {
        self.seeded.as_ref()
    }

    /// A client of its admin API, with its admin token. Over HTTPS build one with
    /// [`admin::client_with`] instead, to trust the simulator's certificate.
    pub fn admin(&self) -> admin::Client {
        admin::client(&self.url, Some(&self.tokens.admin))
            .expect("a client for the simulator's own address")
    }
}
