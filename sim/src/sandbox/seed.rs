//! Seeds: enterprises with their customers, assets and employees, created through the
//! services' own operations so that everything a seed makes obeys the documents' rules.

use std::collections::{HashMap, HashSet};

use licensing_sdk::{
    LicenseType,
    operations::{self as ops, Operation},
};
use serde::Serialize;
use serde_json::{Value, json};

use super::{
    AdminError, Limits,
    client::types::{Seed, SeedAsset, SeedEnterprise, SeedResult, SeededAsset, SeededEnterprise},
};
use crate::ops::{Call, Db, Failure, member, order};

/// A built-in seed by name (kept with the admin client, in `licensing-sandbox-client`).
pub(crate) fn builtin(name: &str) -> Option<Seed> {
    super::client::builtin_seed(name)
}

/// Checks a seed's own consistency before anything is created: known license types,
/// unique asset keys and user names, references to keys that exist, a customer to sell to.
fn check(seed: &Seed) -> Result<(), AdminError> {
    let mut keys = HashSet::new();
    for (i, e) in seed.enterprises.iter().enumerate() {
        let at = |f: String| format!("enterprises[{i}].{f}");
        if e.name.trim().is_empty() {
            return Err(AdminError::field(at("name".into()), "must not be empty"));
        }
        if !e.assets.is_empty() && e.customers.is_empty() {
            return Err(AdminError::field(
                at("customers".into()),
                "assets are sold to the first channel customer: at least one is needed",
            ));
        }
        let mut own = HashSet::new();
        for (j, asset) in e.assets.iter().enumerate() {
            if !keys.insert(asset.key.as_str()) {
                return Err(AdminError::field(
                    at(format!("assets[{j}].key")),
                    format!("{:?} is used twice in the seed", asset.key),
                ));
            }
            own.insert(asset.key.as_str());
            if !LicenseType::from(asset.license_type.as_str()).is_known() {
                return Err(AdminError::field(
                    at(format!("assets[{j}].licenseType")),
                    format!("unknown license type {:?}", asset.license_type),
                ));
            }
            if asset.products.is_empty() {
                return Err(AdminError::field(
                    at(format!("assets[{j}].products")),
                    "must not be empty",
                ));
            }
        }
        let mut users = HashSet::new();
        for (j, m) in e.members.iter().enumerate() {
            if !users.insert(m.user_name.as_str()) {
                return Err(AdminError::field(
                    at(format!("members[{j}].userName")),
                    format!("{:?} is used twice in this enterprise", m.user_name),
                ));
            }
            for (k, key) in m.assets.iter().enumerate() {
                if !own.contains(key.as_str()) {
                    return Err(AdminError::field(
                        at(format!("members[{j}].assets[{k}]")),
                        format!("no asset with key {key:?} in this enterprise"),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Loads a seed into the running state and says what it made. A seed that a service
/// refuses part-way is undone: the state before it is put back.
pub(crate) fn load(sim: &Db, seed: Seed, limits: &Limits) -> Result<SeedResult, AdminError> {
    let mut enterprises = Vec::new();
    run(sim, seed, limits, Some(&mut |e| enterprises.push(e)))?;
    Ok(SeedResult { enterprises })
}

/// As [`load`], the report as the JSON text of a [`SeedResult`], each enterprise's part
/// written as it is made: the admin API's reply, which then never holds the report of a
/// 50,000-asset seed as records (several times its text) beside the state it made.
pub(crate) fn load_as_json(sim: &Db, seed: Seed, limits: &Limits) -> Result<Vec<u8>, AdminError> {
    let mut text = br#"{"enterprises":["#.to_vec();
    let mut first = true;
    run(
        sim,
        seed,
        limits,
        Some(&mut |e| {
            if !first {
                text.push(b',');
            }
            first = false;
            serde_json::to_writer(&mut text, &e).expect("a seed's report serialises");
        }),
    )?;
    text.extend_from_slice(b"]}");
    Ok(text)
}

/// As [`load`], without the report: the seed given at start, where nobody reads it. Of a
/// 50,000-asset seed the report is 7 MB, all of it still held when the state is largest.
pub(crate) fn load_quietly(sim: &Db, seed: Seed, limits: &Limits) -> Result<(), AdminError> {
    run(sim, seed, limits, None)
}

/// Where each enterprise's report goes, when one is wanted.
type Reported<'r> = Option<&'r mut dyn FnMut(SeededEnterprise)>;

fn run(sim: &Db, seed: Seed, limits: &Limits, report: Reported<'_>) -> Result<(), AdminError> {
    let records: usize = seed
        .enterprises
        .iter()
        .map(|e| 1 + e.customers.len() + e.assets.len() + e.members.len())
        .sum();
    if records > limits.max_seed_records {
        return Err(AdminError::too_large(format!(
            "the seed creates {records} records (enterprises, customers, assets and \
             employees), more than the {} one seed may create (raise it with \
             --max-seed-records or SimulatorBuilder::max_seed_records)",
            limits.max_seed_records
        )));
    }
    check(&seed)?;
    let before = sim.export_state();
    let assets = seed.enterprises.iter().map(|e| e.assets.len()).sum();
    // Each asset is sold by an order of its own.
    sim.state_mut().reserve(
        assets,
        assets,
        seed.enterprises.iter().map(|e| e.members.len()).sum(),
    );
    match apply(sim, seed, report) {
        Ok(()) => Ok(()),
        Err(e) => {
            sim.import_state(before)
                .expect("a state the simulator exported is one it imports");
            Err(e)
        }
    }
}

/// A service refused part of the seed: the current state does not take it.
fn failed(at: String, f: Failure) -> AdminError {
    AdminError::conflict(at, format!("code {}: {}", f.code, f.cause))
}

/// One operation of a seed, run as the router runs it: one change at a time, and with a
/// state file logged before it counts.
fn step<T>(
    sim: &Db,
    op: &Operation,
    handler: fn(&Db, &Call) -> Result<T, Failure>,
    call: &Call,
) -> Result<T, Failure> {
    sim.run(op, call, handler)
}

/// Each enterprise's part of the seed is dropped once it is made, so that the seed and
/// the state it becomes are not both held whole.
fn apply(sim: &Db, seed: Seed, mut report: Reported<'_>) -> Result<(), AdminError> {
    for (i, e) in seed.enterprises.into_iter().enumerate() {
        let made = make_enterprise(sim, &Place(i), &e, report.is_some())?;
        if let (Some(each), Some(made)) = (report.as_mut(), made) {
            each(made);
        }
    }
    Ok(())
}

/// What a step made, by the seed's name for each (a channel customer id, a user name): the
/// report's shape, in its own types (a tree of each would be several times its size).
type Made = HashMap<String, String>;

/// The assets made, by their key in the seed.
type MadeAssets = HashMap<String, SeededAsset>;

/// Where in the seed a step's enterprise is: `enterprises[3]`, which a refusal names.
struct Place(usize);

impl Place {
    /// The path of `field` (`.customers[0]`, or "" for the enterprise itself).
    fn path(&self, field: &str) -> String {
        format!("enterprises[{}]{field}", self.0)
    }
}

/// Makes one enterprise of the seed, in the order the services need: the enterprise, its
/// channel customers, its assets (sold to the first customer), its employees, and the
/// assets each employee is given. What it made is returned only when `report`.
fn make_enterprise(
    sim: &Db,
    place: &Place,
    e: &SeedEnterprise,
    report: bool,
) -> Result<Option<SeededEnterprise>, AdminError> {
    let branch = e.branch_name.as_deref().unwrap_or("Main");
    let global_id = create_enterprise(sim, place, e, branch)?;
    let (customers, first_customer) = bind_customers(sim, place, e, branch, &global_id)?;
    let (assets, nums) = match &first_customer {
        Some(customer) if !e.assets.is_empty() => {
            sell_assets(sim, place, e, customer, &global_id, report)?
        }
        _ => (HashMap::new(), HashMap::new()),
    };
    let members = add_members(sim, place, e, &global_id, report)?;
    give_assets(sim, place, e, &members, &nums)?;
    if !report {
        return Ok(None);
    }
    Ok(Some(SeededEnterprise {
        name: e.name.to_string(),
        enterprise_global_id: global_id,
        customers,
        assets,
        members,
    }))
}

/// `createEnterprise`; returns the new enterprise's global id.
fn create_enterprise(
    sim: &Db,
    place: &Place,
    e: &SeedEnterprise,
    branch: &str,
) -> Result<String, AdminError> {
    let mut body = json!({
        "crmCustomerId": e.crm_customer_id,
        "customerName": e.name,
        "branchName": branch,
    });
    if let Some(address) = &e.address {
        body["address"] = json!(address);
    }
    let created = step(
        sim,
        &ops::CREATE_ENTERPRISE,
        order::create_enterprise,
        &Call::internal(&[], &[], Some(&body)),
    )
    .map_err(|f| failed(place.path(""), f))?;
    Ok(created.enterprise_global_id)
}

/// `bindEnterprise` for each channel customer; returns the customer ids by channel
/// customer id, and the first (the one the assets are sold to).
fn bind_customers(
    sim: &Db,
    place: &Place,
    e: &SeedEnterprise,
    branch: &str,
    global_id: &str,
) -> Result<(Made, Option<String>), AdminError> {
    let mut customers = Made::new();
    let mut first_customer = None;
    for (j, c) in e.customers.iter().enumerate() {
        let body = json!({
            "channelCode": c.channel_code,
            "channelCustomerId": c.channel_customer_id,
            "customerName": c.customer_name.clone().unwrap_or_else(|| e.name.to_string()),
            "branchName": branch,
            "enterpriseName": e.name,
            "passwordMobile": c.password_mobile.clone().unwrap_or_else(|| "13800000000".into()),
        });
        let bound = step(
            sim,
            &ops::BIND_ENTERPRISE,
            order::bind_enterprise,
            &Call::internal(&[], &[], Some(&body)),
        )
        .map_err(|f| failed(place.path(&format!(".customers[{j}]")), f))?;
        if bound.enterprise_global_id != global_id {
            return Err(AdminError::conflict(
                place.path(&format!(".customers[{j}].channelCustomerId")),
                "is already bound to another enterprise",
            ));
        }
        first_customer.get_or_insert(bound.customer_id.clone());
        customers.insert(c.channel_customer_id.to_string(), bound.customer_id);
    }
    Ok((customers, first_customer))
}

/// Allocates a number for each asset and sells them all to `customer` in one
/// `batchOrder`, an order each; returns the made assets by key (when the report is
/// wanted), and their numbers.
fn sell_assets<'s>(
    sim: &Db,
    place: &Place,
    e: &'s SeedEnterprise,
    customer: &str,
    global_id: &str,
    report: bool,
) -> Result<(MadeAssets, HashMap<&'s str, String>), AdminError> {
    let size = json!({ "size": e.assets.len() });
    let allocated = step(
        sim,
        &ops::ALLOCATE_SHELL_NUMS,
        order::allocate_shell_nums,
        &Call::internal(&[], &[], Some(&size)),
    )
    .map_err(|f| failed(place.path(".assets"), f))?;
    // Sized once: grown by doubling, its tables of every size freed among the records
    // being made raised a 50,000-asset seed's peak by some 7 MiB.
    let mut nums: HashMap<&str, String> = HashMap::with_capacity(e.assets.len());
    let orders: Vec<NewBuy> = e
        .assets
        .iter()
        .zip(&allocated)
        .enumerate()
        .map(|(j, (asset, num))| {
            let num = num.to_string();
            nums.insert(asset.key.as_str(), num.clone());
            new_buy(j, customer, global_id, e, asset, &num)
        })
        .collect();
    let body = Batch {
        channel_code: "SEED",
        channel_order_id: format!("SEED-{global_id}"),
        sync_mode: "sync",
        order_list: orders,
    };
    step(
        sim,
        &ops::BATCH_ORDER,
        order::batch_order,
        &Call::internal(&[], &[("appKey", "seed")], Some(&body)),
    )
    .map_err(|f| failed(place.path(".assets"), f))?;
    let mut assets = HashMap::new();
    if !report {
        return Ok((assets, nums));
    }
    let state = sim.state();
    for asset in &e.assets {
        let num = &nums[asset.key.as_str()];
        let id = state
            .assets
            .get(num)
            .map(|a| a.id.clone())
            .unwrap_or_default();
        assets.insert(
            asset.key.to_string(),
            SeededAsset {
                asset_num: num.clone(),
                asset_id: id,
            },
        );
    }
    Ok((assets, nums))
}

/// `addMembers`, 100 employees a call (the most it takes); returns the employees' global
/// ids by user name: every employee's when `report`, otherwise only those the seed gives
/// assets to.
fn add_members(
    sim: &Db,
    place: &Place,
    e: &SeedEnterprise,
    global_id: &str,
    report: bool,
) -> Result<Made, AdminError> {
    let mut members = Made::new();
    for (chunk_no, chunk) in e.members.chunks(100).enumerate() {
        let list: Vec<Value> = chunk
            .iter()
            .map(|m| json!({ "userName": m.user_name, "password": m.password, "name": m.name }))
            .collect();
        let body = json!({ "userList": list });
        let added = step(
            sim,
            &ops::ADD_MEMBERS,
            member::add_members,
            &Call::internal(&[("enterpriseGlobalId", global_id)], &[], Some(&body)),
        )
        .map_err(|f| {
            let first = f
                .partial
                .as_ref()
                .and_then(|p| p.failed.first())
                .map(|x| format!(" ({}: {})", x.user_name, x.message))
                .unwrap_or_default();
            AdminError::conflict(
                place.path(&format!(".members[{}]", chunk_no * 100)),
                format!("code {}: {}{first}", f.code, f.cause),
            )
        })?;
        for (m, created) in chunk.iter().zip(&added.succeeded) {
            // Without a report only `give_assets` reads this, for the employees it gives
            // assets to: a map of every employee, grown and dropped per enterprise, left
            // some 14 MiB of a 100,000-employee seed's peak in the allocator's holes.
            if report || !m.assets.is_empty() {
                members.insert(m.user_name.to_string(), created.global_id.clone());
            }
        }
    }
    Ok(members)
}

/// `configureMemberAssets` for each employee the seed gives assets to, by their `nums`.
fn give_assets(
    sim: &Db,
    place: &Place,
    e: &SeedEnterprise,
    members: &Made,
    nums: &HashMap<&str, String>,
) -> Result<(), AdminError> {
    for (j, m) in e.members.iter().enumerate() {
        if m.assets.is_empty() {
            continue;
        }
        let id = members[m.user_name.as_str()].as_str();
        let add: Vec<&String> = m.assets.iter().map(|k| &nums[k.as_str()]).collect();
        let body = json!({ "deleteAssets": [], "addAssets": add });
        step(
            sim,
            &ops::CONFIGURE_MEMBER_ASSETS,
            member::configure_member_assets,
            &Call::internal(&[("memberGlobalId", id)], &[], Some(&body)),
        )
        .map_err(|f| failed(place.path(&format!(".members[{j}].assets")), f))?;
    }
    Ok(())
}

/// A seed's `batchOrder` body, written as the documents name its fields.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Batch<'s> {
    channel_code: &'static str,
    channel_order_id: String,
    sync_mode: &'static str,
    order_list: Vec<NewBuy<'s>>,
}

/// A `new_buy` order of a seed (borrowing the seed, so that a batch of thousands is
/// serialized without a `Value` of it built first).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NewBuy<'s> {
    sequence: usize,
    customer_id: &'s str,
    crm_customer_id: &'s str,
    customer_name: &'s str,
    channel_customer_id: Option<&'s str>,
    admin_name: &'static str,
    admin_account: &'static str,
    admin_email: &'static str,
    admin_cell_number: &'static str,
    password_mobile: &'static str,
    address: &'s str,
    customer_type: &'static str,
    branch_code: &'static str,
    branch_name: &'s str,
    enterprise_global_id: &'s str,
    license_type: &'s str,
    order_type: &'static str,
    assets: [NewBuyAsset<'s>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NewBuyAsset<'s> {
    asset_nos: [String; 1],
    borrowed_usb_key: bool,
    products: Vec<NewBuyProduct<'s>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NewBuyProduct<'s> {
    crm_product_id: String,
    parent_crm_product_id: String,
    product_uri: &'s str,
    product_name: &'s str,
    product_type: &'static str,
    limit_concurrent: i32,
    limit_time_duration: i64,
    trial: i64,
    trial_end_date: i64,
    time_unit: &'static str,
    time_unit_quantity: i64,
    time_duration_expression: &'static str,
    product_features: [(); 0],
}

/// A `new_buy` order for one seed asset, the order fields the seed does not give filled
/// with plain values.
fn new_buy<'s>(
    sequence: usize,
    customer: &'s str,
    enterprise: &'s str,
    e: &'s SeedEnterprise,
    asset: &'s SeedAsset,
    num: &str,
) -> NewBuy<'s> {
    let products = asset
        .products
        .iter()
        .map(|p| NewBuyProduct {
            crm_product_id: format!("P-{num}-{}", p.product_uri.as_str()),
            parent_crm_product_id: format!("A-{num}"),
            product_uri: p.product_uri.as_str(),
            product_name: p
                .product_name
                .as_deref()
                .unwrap_or_else(|| p.product_uri.as_str()),
            product_type: "software",
            limit_concurrent: p.limit_concurrent.unwrap_or(1),
            limit_time_duration: 0,
            trial: 0,
            trial_end_date: 0,
            time_unit: "year",
            time_unit_quantity: 1,
            time_duration_expression: "1-0-0",
            product_features: [],
        })
        .collect();
    NewBuy {
        sequence: sequence + 1,
        customer_id: customer,
        crm_customer_id: e.crm_customer_id.as_str(),
        customer_name: e.name.as_str(),
        channel_customer_id: e.customers.first().map(|c| c.channel_customer_id.as_str()),
        admin_name: "Seed Admin",
        admin_account: "admin",
        admin_email: "admin@example.com",
        admin_cell_number: "13800000000",
        password_mobile: "13800000000",
        address: e.address.as_deref().unwrap_or_default(),
        customer_type: "company",
        branch_code: "BR01",
        branch_name: e.branch_name.as_deref().unwrap_or("Main"),
        enterprise_global_id: enterprise,
        license_type: asset.license_type.as_str(),
        order_type: "new_buy",
        assets: [NewBuyAsset {
            asset_nos: [num.to_string()],
            borrowed_usb_key: asset.lent_lock.unwrap_or(false),
            products,
        }],
    }
}
