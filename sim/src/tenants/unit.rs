//! One sandbox: what a simulator held before it had tenants, and what each tenant holds
//! now (the state, its clock and allocator, the journal, the fault rules and settings,
//! the `g_nonce` window, the credentials, the router that serves them, and its console).

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use licensing_host::{admin::AdminAccess, pages::AdminRoute};

use crate::{
    ops::{Db, Settings},
    protocol::{self, App, Credentials, Gate, NonceWindow},
    sandbox::{self, Sandbox, faults::Faults, journal::Journal, rules::Rules},
};

/// What each sandbox of a simulator is built with, apart from its credentials.
#[derive(Clone, Debug)]
pub(crate) struct Template {
    pub settings: Settings,
    pub max_string_bytes: usize,
    pub nonce_window: Duration,
    pub nonce_capacity: usize,
    pub journal_capacity: usize,
    pub journal_bytes: usize,
    pub limits: sandbox::Limits,
    pub faults: sandbox::faults::FaultSettings,
}

impl Template {
    /// The template of one tenant among at most `tenants`: the bounds of what a sandbox
    /// may hold in memory (records, journal bytes, remembered `g_nonce`s) divided among
    /// them, so that the simulator full of tenants holds about what its default tenant
    /// alone may; each share is at least `floor` of its kind.
    pub fn share(&self, tenants: usize) -> Self {
        let n = tenants.max(1);
        let part = |bound: usize, floor: usize| (bound / n).max(floor.min(bound));
        let mut share = self.clone();
        let settings = &mut share.settings;
        settings.max_enterprises = part(settings.max_enterprises, 10);
        settings.max_members = part(settings.max_members, 100);
        settings.max_orders = part(settings.max_orders, 100);
        share.journal_bytes = part(self.journal_bytes, 256 * 1024);
        share.nonce_capacity = part(self.nonce_capacity, 1000);
        share
    }
}

/// Which console a sandbox serves (with the feature `console`; none without it).
pub(crate) enum Console {
    /// The simulator's own, with a picker of the registry's tenants.
    Simulator(Arc<super::Registry>),
    /// A tenant's own pages, under the prefix of its admin checks.
    Tenant,
}

/// One sandbox, ready to serve.
#[derive(Debug)]
pub(crate) struct Unit {
    pub db: Arc<Db>,
    pub sandbox: Arc<Sandbox>,
    pub app: App,
    /// Its admin checks and the sessions of its console, which the simulator's console
    /// opens for its admin (without the console, nothing reads them here).
    #[cfg(feature = "console")]
    pub admin: AdminAccess,
}

impl Unit {
    /// A sandbox over `db`, accepting `credentials` on the services and the admin checks
    /// of `admin` on its admin API, which has the sandbox's routes and `more`, and on the
    /// pages of its `console`.
    pub fn build(
        template: &Template,
        db: Db,
        credentials: Credentials,
        admin: AdminAccess,
        more: Vec<AdminRoute>,
        console: Console,
    ) -> Self {
        let db = Arc::new(db);
        let sandbox = Arc::new(Sandbox {
            db: Arc::clone(&db),
            faults: Faults::new(template.faults),
            journal: Journal::new(template.journal_capacity, template.journal_bytes),
            rules: Rules::default(),
            limits: template.limits,
        });
        #[cfg(feature = "console")]
        let pages = Some(crate::console::pages(
            &sandbox,
            &admin,
            match console {
                Console::Simulator(registry) => crate::console::Scope::Simulator(registry),
                Console::Tenant => crate::console::Scope::Tenant,
            },
        ));
        #[cfg(not(feature = "console"))]
        let pages = match console {
            Console::Simulator(registry) => {
                drop(registry);
                None
            }
            Console::Tenant => None,
        };
        let mut routes = sandbox.routes();
        routes.extend(more);
        let gate = Gate {
            db: Arc::clone(&db),
            credentials,
            admin: admin.clone(),
            nonces: Mutex::new(NonceWindow::new(
                template.nonce_window,
                template.nonce_capacity,
            )),
            max_string_bytes: template.max_string_bytes,
            hooks: Arc::clone(&sandbox) as Arc<dyn protocol::hooks::Hooks>,
        };
        let app = App::new(gate, routes, pages);
        Self {
            db,
            sandbox,
            app,
            #[cfg(feature = "console")]
            admin,
        }
    }
}
