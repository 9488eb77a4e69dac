//! The simulator tests' set-up (feature `sim`): a running simulator, SDK clients for it, a
//! raw HTTP helper for requests the SDK refuses to send, and fixtures (an enterprise, asset
//! numbers, orders).

use std::num::NonZeroU32;

use licensing_sdk::{
    Error, ErrorCode, RetryPolicy, member,
    member::types as mt,
    operations::{self, Service},
    order,
    order::types as ot,
};
use licensing_sim::{
    DEFAULT_APP_TOKEN, DEFAULT_CLIENT_TOKEN, DEFAULT_USER_TOKEN, Simulator, SimulatorBuilder, admin,
};
use serde_json::{Value, json};

/// A simulator with clients for both services. The clients never retry, so a test sees
/// exactly the reply it provoked.
pub struct Env {
    pub sim: Simulator,
    pub order: order::Client,
    pub member: member::Client,
    http: reqwest::Client,
}

/// The simulator `builder` makes, started.
pub async fn simulator(builder: SimulatorBuilder) -> Simulator {
    builder.start().await.expect("the simulator starts")
}

pub async fn start() -> Env {
    start_with(Simulator::builder()).await
}

/// A simulator with one enterprise set up by [`Env::enterprise`]: what most tests of the
/// operations start from.
pub async fn with_enterprise(name: &str) -> (Env, Enterprise) {
    let env = start().await;
    let ent = env.enterprise(name).await;
    (env, ent)
}

/// As [`with_enterprise`], with `n` asset numbers allocated.
pub async fn with_numbers(name: &str, n: u32) -> (Env, Enterprise, Vec<String>) {
    let (env, ent) = with_enterprise(name).await;
    let nums = env.allocate(n).await;
    (env, ent, nums)
}

pub async fn start_with(builder: SimulatorBuilder) -> Env {
    let sim = builder.start().await.expect("the simulator starts");
    let url = sim.url();
    let order = order::Client::builder(&url)
        .application_token(DEFAULT_APP_TOKEN)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();
    let member = member::Client::builder(&url)
        .client_token(DEFAULT_CLIENT_TOKEN)
        .user_token(DEFAULT_USER_TOKEN)
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();
    Env {
        sim,
        order,
        member,
        http: reqwest::Client::new(),
    }
}

/// Loads the built-in demo seed through the admin API `admin`: what it made.
pub async fn load_demo(admin: &admin::Client) -> admin::types::SeedResult {
    admin
        .load_builtin_seed()
        .name(admin::types::BuiltinSeed::Demo)
        .send()
        .await
        .expect("the demo seed loads")
        .into_inner()
}

/// The simulator's journal, as the admin API `admin` lists it.
pub async fn journal(admin: &admin::Client) -> admin::types::JournalPage {
    admin
        .list_journal()
        .send()
        .await
        .expect("the journal")
        .into_inner()
}

/// The journal's entries of the operation `id`, as the admin API `admin` lists them.
pub async fn journal_of(admin: &admin::Client, id: &str) -> admin::types::JournalPage {
    admin
        .list_journal()
        .operation(id)
        .send()
        .await
        .expect("the journal")
        .into_inner()
}

/// The path of operation `id` with its path parameters filled in, in order: tests take
/// paths from the generated table, so a path changed in the spec cannot leave a test
/// calling the old one.
#[track_caller]
pub fn path(id: &str, values: &[&str]) -> String {
    operations::find(id)
        .unwrap_or_else(|| panic!("no operation {id:?} in the table"))
        .path_with(values)
}

/// The business code of an SDK error.
#[track_caller]
pub fn code_of<T: std::fmt::Debug>(result: Result<T, Error>) -> ErrorCode {
    match result {
        Err(e) => e
            .code()
            .cloned()
            .unwrap_or_else(|| panic!("expected a business error, got {e}")),
        Ok(v) => panic!("expected a business error, got Ok({v:?})"),
    }
}

/// A raw reply: HTTP status and JSON body.
#[derive(Debug)]
pub struct Raw {
    pub status: u16,
    pub body: Value,
}

impl Raw {
    /// The envelope's code as a string (`"0"` for success).
    pub fn code(&self) -> String {
        match &self.body["code"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

impl Env {
    /// Stops the simulator after its clients, which releases its state file.
    pub async fn stop(self) {
        let Env {
            sim, order, member, ..
        } = self;
        drop((order, member));
        sim.shutdown().await.unwrap();
    }

    pub fn url(&self) -> String {
        self.sim.url()
    }

    /// A request with valid credentials for the path's service and a fresh `g_nonce`.
    pub async fn raw(&self, method: &str, path_and_query: &str, body: Option<Value>) -> Raw {
        let sep = if path_and_query.contains('?') {
            '&'
        } else {
            '?'
        };
        let nonce = licensing_sdk::runtime::nonce();
        let url = format!("{}{path_and_query}{sep}g_nonce={nonce}", self.url());
        let mut request = self
            .http
            .request(method.parse().unwrap(), url)
            .headers(credentials(path_and_query));
        if let Some(body) = body {
            request = request.json(&body);
        }
        send(request).await
    }

    /// A request exactly as given: no credentials or nonce added.
    pub async fn bare(
        &self,
        method: &str,
        path_and_query: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Raw {
        let mut request = self.http.request(
            method.parse().unwrap(),
            format!("{}{path_and_query}", self.url()),
        );
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        send(request).await
    }

    /// An enterprise created with `createEnterprise` and a channel customer bound to it.
    pub async fn enterprise(&self, name: &str) -> Enterprise {
        enterprise(&self.order, name).await
    }

    pub async fn allocate(&self, size: u32) -> Vec<String> {
        self.order
            .allocate_shell_nums()
            .body(ot::AllocateShellNumsRequest::builder().size(NonZeroU32::new(size).unwrap()))
            .await
            .expect("allocateShellNums")
            .into_iter()
            .map(String::from)
            .collect()
    }

    /// Sends a batch with one order; returns its license order id.
    pub async fn order(&self, order: Value) -> String {
        let result = self.batch_order(batch(vec![order])).await;
        result[0].license_order_id.clone()
    }

    /// Sends `batch` (with the app key `app`): its results.
    pub async fn batch_order(&self, batch: ot::BatchOrderRequest) -> Vec<ot::BatchOrderResultItem> {
        self.order
            .batch_order()
            .app_key("app")
            .body(batch)
            .await
            .expect("batchOrder")
    }

    /// `member` lends the rights of `asset_ids` into the lent lock `lent_lock` (`lendAssets`).
    pub async fn lend(&self, member: &str, lent_lock: &str, asset_ids: Vec<String>) {
        self.member
            .lend_assets()
            .member_global_id(member)
            .body(
                mt::LendAssetsRequest::builder()
                    .borrowed_usb_key(lent_lock)
                    .asset_ids(asset_ids),
            )
            .await
            .expect("lendAssets");
    }

    /// Edits the employee `member` of `ent` as `body` says (`editMember`).
    pub async fn edit_member(
        &self,
        ent: &Enterprise,
        member: &str,
        body: mt::builder::EditMemberRequest,
    ) {
        self.member
            .edit_member()
            .enterprise_global_id(&ent.global_id)
            .member_global_id(member)
            .body(body)
            .await
            .expect("editMember");
    }

    /// Buys refillable locks `nums` with the `base` product on one node each: the order id.
    pub async fn buy_base(&self, ent: &Enterprise, nums: &[String]) -> String {
        self.buy(ent, "normal_recover_usbkey", nums, "base", 1)
            .await
    }

    /// Revokes the asset `num` (`delete_asset`), scoped to the order `bought` that sold it.
    pub async fn revoke(&self, ent: &Enterprise, num: &str, bought: &str) -> String {
        let mut revoke = license_order(
            ent,
            "delete_asset",
            "normal_recover_usbkey",
            json!([{ "assetNos": [num] }]),
        );
        revoke["srcLicenseOrderId"] = json!(bought);
        self.order(revoke).await
    }

    /// Buys the lent lock (`borrowedUsbKey`) `num`, with the `lock` product on one node.
    pub async fn buy_lent_lock(&self, ent: &Enterprise, num: &str) -> String {
        self.order(new_buy(
            ent,
            "normal_recover_usbkey",
            json!([{ "assetNos": [num], "borrowedUsbKey": true, "products": [product("lock", 1)] }]),
        ))
        .await
    }

    /// Buys `license_type` assets with one product each (`uri`, `nodes` concurrent nodes).
    pub async fn buy(
        &self,
        ent: &Enterprise,
        license_type: &str,
        nums: &[String],
        uri: &str,
        nodes: i32,
    ) -> String {
        self.order(new_buy(
            ent,
            license_type,
            json!([{ "assetNos": nums, "products": [product(uri, nodes)] }]),
        ))
        .await
    }

    /// Adds one employee; returns its global id.
    pub async fn add_member(&self, ent: &Enterprise, user_name: &str) -> String {
        let result = self
            .member
            .add_members()
            .enterprise_global_id(&ent.global_id)
            .body(mt::AddMembersRequest::builder().user_list(vec![new_member(
                user_name,
                "Secret-123",
                user_name,
            )]))
            .await
            .expect("addMembers");
        result.succeeded[0].global_id.clone()
    }

    /// The asset id of an asset number, from the member center's list.
    pub async fn asset_id(&self, ent: &Enterprise, num: &str) -> String {
        self.assets(ent)
            .await
            .into_iter()
            .find(|a| a.asset_num == num)
            .unwrap_or_else(|| panic!("asset {num} listed"))
            .asset_id
    }

    /// The enterprise's assets, as the member center lists them (`listAssetNums`).
    pub async fn assets(&self, ent: &Enterprise) -> Vec<mt::EnterpriseAsset> {
        self.assets_of(&ent.global_id).await
    }

    /// The assets of the enterprise `global_id` (`listAssetNums`).
    pub async fn assets_of(&self, global_id: &str) -> Vec<mt::EnterpriseAsset> {
        self.member
            .list_asset_nums()
            .enterprise_global_id(global_id)
            .await
            .expect("listAssetNums")
    }

    /// The products and packages under an asset (`listAssetProducts`).
    pub async fn products(&self, asset_id: &str) -> mt::AssetProducts {
        self.member
            .list_asset_products()
            .asset_id(asset_id)
            .await
            .expect("listAssetProducts")
    }

    /// The enterprise's lent locks (`listLentLocks`).
    pub async fn lent_locks(&self, ent: &Enterprise) -> Vec<mt::LentLock> {
        self.lent_locks_of(&ent.global_id).await
    }

    /// The lent locks of the enterprise `global_id` (`listLentLocks`).
    pub async fn lent_locks_of(&self, global_id: &str) -> Vec<mt::LentLock> {
        self.member
            .list_lent_locks()
            .enterprise_global_id(global_id)
            .await
            .expect("listLentLocks")
    }

    /// Page `page` of the enterprise's employees, ten a page: a `listMembers` call a test
    /// may narrow further before awaiting it.
    pub fn members(&self, ent: &Enterprise, page: u32) -> member::builder::ListMembers<'_> {
        self.member
            .list_members()
            .enterprise_global_id(&ent.global_id)
            .page_num(page)
            .page_size(10u32)
    }

    /// A `deleteMember` call for one of the enterprise's employees.
    pub fn delete_member(
        &self,
        ent: &Enterprise,
        member: &str,
    ) -> member::builder::DeleteMember<'_> {
        self.member
            .delete_member()
            .enterprise_global_id(&ent.global_id)
            .member_global_id(member)
    }

    /// Assigns asset numbers to an employee.
    pub async fn assign(&self, member: &str, nums: &[String]) {
        self.member
            .configure_member_assets()
            .member_global_id(member)
            .body(
                mt::ConfigureAssetsRequest::builder()
                    .delete_assets(Vec::<String>::new())
                    .add_assets(nums.to_vec()),
            )
            .await
            .expect("configureMemberAssets");
    }
}

/// An enterprise created with `createEnterprise` and a channel customer bound to it: what
/// most simulator tests start from.
pub async fn enterprise(order: &order::Client, name: &str) -> Enterprise {
    let created = order
        .create_enterprise()
        .body(
            ot::CreateEnterpriseRequest::builder()
                .crm_customer_id(format!("CRM-{name}"))
                .customer_name(name)
                .branch_name("North")
                .address(Some("1 Main Street".to_string())),
        )
        .await
        .expect("createEnterprise");
    let bound = order
        .bind_enterprise()
        .body(
            ot::BindEnterpriseRequest::builder()
                .channel_code("CH01")
                .channel_customer_id(format!("CC-{name}"))
                .customer_name(format!("{name} channel"))
                .branch_name("North")
                .enterprise_name(name)
                .password_mobile("13800000000"),
        )
        .await
        .expect("bindEnterprise");
    assert_eq!(bound.enterprise_global_id, created.enterprise_global_id);
    Enterprise {
        global_id: created.enterprise_global_id,
        customer_id: bound.customer_id,
        channel_customer_id: format!("CC-{name}"),
        members: created
            .members
            .into_iter()
            .map(|m| m.member_global_id)
            .collect(),
    }
}

/// The service a request path belongs to: the one whose operations' paths start with the
/// same segment, so that paths the table does not hold (the 404 tests) still get the
/// credentials of the service they imitate.
pub fn service_of(path: &str) -> Option<Service> {
    let first = |p: &str| {
        p.trim_start_matches('/')
            .split(['/', '?'])
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let mut services = operations::ALL
        .iter()
        .filter(|op| first(op.path) == first(path))
        .map(|op| op.service);
    let service = services.next()?;
    assert!(
        services.all(|s| s == service),
        "{path}: the first segment does not tell the service"
    );
    Some(service)
}

/// Valid credentials for the path's service; none for a path of no service.
fn credentials(path: &str) -> reqwest::header::HeaderMap {
    let mut headers = reqwest::header::HeaderMap::new();
    match service_of(path) {
        Some(Service::Order) => {
            headers.insert(
                "authorization",
                format!("Bearer {DEFAULT_APP_TOKEN}").parse().unwrap(),
            );
            // The order document requires it on every endpoint, as the SDK sends it.
            headers.insert("content-type", "application/json".parse().unwrap());
        }
        Some(Service::Member) => {
            headers.insert(
                "authorization",
                format!("Bearer {DEFAULT_CLIENT_TOKEN}").parse().unwrap(),
            );
            headers.insert("clienttoken", DEFAULT_CLIENT_TOKEN.parse().unwrap());
            headers.insert("usertoken", DEFAULT_USER_TOKEN.parse().unwrap());
        }
        None => {}
    }
    headers
}

async fn send(request: reqwest::RequestBuilder) -> Raw {
    let response = request.send().await.expect("the simulator answers");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    Raw { status, body }
}

/// An enterprise set up by [`Env::enterprise`].
#[derive(Clone, Debug)]
pub struct Enterprise {
    pub global_id: String,
    /// The bound channel customer (not the default one).
    pub customer_id: String,
    pub channel_customer_id: String,
    /// The industry administrator and the cloud employee created with it.
    pub members: Vec<String>,
}

/// An employee to add.
pub fn new_member(user_name: &str, password: &str, name: &str) -> mt::NewMember {
    mt::NewMember::builder()
        .user_name(user_name)
        .password(password)
        .name(name)
        .try_into()
        .expect("a valid employee")
}

/// A full product as a `new_buy` order carries it.
pub fn product(uri: &str, nodes: i32) -> Value {
    json!({
        "crmProductId": format!("P-{uri}"),
        "parentCrmProductId": "A-100",
        "productUri": uri,
        "productName": format!("Product {uri}"),
        "gmsPid": uri,
        "productType": "software",
        "limitStartDate": 1_767_225_600_000_i64,
        "limitEndDate": 1_798_761_600_000_i64,
        "limitConcurrent": nodes,
        "limitTimeDuration": 0,
        "strictMatchWhenDelete": false,
        "trial": 0,
        "trialEndDate": 0,
        "timeUnit": "year",
        "timeUnitQuantity": 1,
        "timeDurationExpression": "1-0-0",
        "productFeatures": []
    })
}

/// One order of a batch for the enterprise's bound customer.
pub fn license_order(
    ent: &Enterprise,
    order_type: &str,
    license_type: &str,
    assets: Value,
) -> Value {
    json!({
        "sequence": 1,
        "customerId": ent.customer_id,
        "crmCustomerId": "CRM-1",
        "customerName": "Customer",
        "channelCustomerId": ent.channel_customer_id,
        "adminName": "Ada Admin",
        "adminAccount": "ada",
        "adminEmail": "ada@example.com",
        "adminCellNumber": "13800000000",
        "passwordMobile": "13800000000",
        "address": "1 Main Street",
        "customerType": "company",
        "branchCode": "BR01",
        "branchName": "North",
        "enterpriseGlobalId": ent.global_id,
        "licenseType": license_type,
        "orderType": order_type,
        "assets": assets
    })
}

pub fn new_buy(ent: &Enterprise, license_type: &str, assets: Value) -> Value {
    license_order(ent, "new_buy", license_type, assets)
}

/// A batch of orders, as the generated request type.
pub fn batch(orders: Vec<Value>) -> ot::BatchOrderRequest {
    serde_json::from_value(json!({
        "channelCode": "CH01",
        "channelOrderId": "CO-1",
        "syncMode": "sync",
        "orderList": orders
    }))
    .expect("a valid batch")
}
