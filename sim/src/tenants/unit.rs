//! One sandbox: what a simulator held before it had tenants, and what each tenant holds
//! now (the state, its clock and allocator, the journal, the fault rules and settings,
//! the `g_nonce` window, the credentials, and the router that serves them).

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

/// One sandbox, ready to serve.
#[derive(Debug)]
pub(crate) struct Unit {
    pub db: Arc<Db>,
    pub sandbox: Arc<Sandbox>,
    pub app: App,
}

impl Unit {
    /// A sandbox over `db`, accepting `credentials` on the services and the admin checks
    /// of `admin` on its admin API, which has the sandbox's routes and `more`; with the
    /// console's pages when `pages` (and the feature `console`).
    pub fn build(
        template: &Template,
        db: Db,
        credentials: Credentials,
        admin: AdminAccess,
        more: Vec<AdminRoute>,
        pages: bool,
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
        let pages = pages.then(|| crate::console::pages(&sandbox, &admin));
        #[cfg(not(feature = "console"))]
        let pages = {
            let _ = pages;
            None
        };
        let mut routes = sandbox.routes();
        routes.extend(more);
        let gate = Gate {
            db: Arc::clone(&db),
            credentials,
            admin,
            nonces: Mutex::new(NonceWindow::new(
                template.nonce_window,
                template.nonce_capacity,
            )),
            max_string_bytes: template.max_string_bytes,
            hooks: Arc::clone(&sandbox) as Arc<dyn protocol::hooks::Hooks>,
        };
        let app = App::new(gate, routes, pages);
        Self { db, sandbox, app }
    }
}
