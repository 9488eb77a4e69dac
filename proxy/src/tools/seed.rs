//! A sandbox seed from what a recording observed: the enterprises, channel customers,
//! assets (numbers, lock kinds, products) and employees its successful replies showed, in
//! the order the simulator creates them, so a simulator started on the seed gives the
//! same ids to the same records when the recording came from one.

use std::{collections::BTreeMap, path::Path};

use licensing_sandbox_client::{parse_seed, types::Seed};
use serde_json::{Value, json};

use super::entries;

/// What replaces a password the recording could not hold (passwords are never recorded).
pub const SEED_PASSWORD: &str = "Seeded-Pass-1";

/// The accounts the simulator's `createEnterprise` makes with every enterprise (its
/// `members`): a seed's enterprise gets them again, so they are not seed members.
const CREATED_WITH_ENTERPRISE: [&str; 2] = ["admin", "cloud"];

#[derive(Default)]
struct Enterprise {
    name: Option<String>,
    crm: Option<String>,
    branch: Option<String>,
    address: Option<String>,
    customers: Vec<(String, String)>,
    /// By asset number: asset id, holder, lent lock.
    assets: BTreeMap<String, (String, Option<String>, bool)>,
    /// In the order listed: global id, account name, name.
    members: Vec<(String, String, String)>,
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// The segment of a recorded URL's path after `marker`.
fn after<'u>(url: &'u str, marker: &str) -> Option<&'u str> {
    let path = url.split('?').next()?;
    let rest = &path[path.find(marker)? + marker.len()..];
    rest.split('/').next().filter(|s| !s.is_empty())
}

/// `licensing-proxy seed from-recording FILE.har`: the seed as the sandbox's `Seed`.
pub fn seed_from_recording(path: &Path) -> Result<Seed, String> {
    let mut observed = Observed::default();
    for entry in entries(path)? {
        observed.read(&entry);
    }
    let enterprises = observed.into_seed();
    parse_seed(&json!({"enterprises": enterprises}).to_string())
        .map_err(|e| format!("{}: the seed made from it is refused: {e}", path.display()))
}

/// Products by asset id, from `listAssetProducts`: the license type, and the products.
type Products = BTreeMap<String, (Option<String>, Vec<Value>)>;

/// What a recording's successful replies showed.
#[derive(Default)]
struct Observed {
    /// Enterprise ids in the order first seen: the order the seed creates them in.
    order: Vec<String>,
    found: BTreeMap<String, Enterprise>,
    products: Products,
}

impl Observed {
    /// The enterprise `id`, noted in the order enterprises were first seen.
    fn enterprise(&mut self, id: &str) -> &mut Enterprise {
        if !self.order.iter().any(|o| o == id) {
            self.order.push(id.to_string());
        }
        self.found.entry(id.to_string()).or_default()
    }

    /// One recorded exchange, read when its reply succeeded (`code` 0).
    fn read(&mut self, entry: &Value) {
        let Some(reply) = entry
            .pointer("/response/content/text")
            .and_then(Value::as_str)
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
        else {
            return;
        };
        if reply.get("code") != Some(&json!(0)) {
            return;
        }
        let data = reply.get("data").unwrap_or(&Value::Null);
        let url = entry
            .pointer("/request/url")
            .and_then(Value::as_str)
            .unwrap_or("");
        let operation = entry
            .get("_operationId")
            .and_then(Value::as_str)
            .unwrap_or("");
        let path_eg = after(url, "/enterprise/");
        match (operation, path_eg) {
            ("queryEnterprise", _) => self.customers(data),
            ("createEnterprise", _) => self.created(entry, data),
            ("listAssetNums", Some(eg)) => self.assets(eg, data, false),
            ("listLentLocks", Some(eg)) => self.assets(eg, data, true),
            ("listMembers", Some(eg)) => self.members(eg, data),
            ("listAssetProducts", _) => {
                if let Some(asset) = after(url, "/asset/") {
                    self.products.insert(asset.to_string(), products(data));
                }
            }
            _ => {}
        }
    }

    /// `queryEnterprise`: the enterprises of a channel customer, their names and the
    /// channel customers bound to them.
    fn customers(&mut self, data: &Value) {
        for c in data.as_array().into_iter().flatten() {
            let Some(eg) = text(c, "enterpriseGlobalId") else {
                continue;
            };
            let e = self.enterprise(&eg);
            e.name = e.name.take().or_else(|| text(c, "enterpriseName"));
            if let (Some(code), Some(id)) = (text(c, "channelCode"), text(c, "channelCustomerId"))
                // The CRM default customer has no channel.
                && !code.is_empty()
                && !id.is_empty()
                && !e.customers.iter().any(|(a, b)| *a == code && *b == id)
                && c.get("isDefault") != Some(&json!(true))
            {
                e.customers.push((code, id));
            }
        }
    }

    /// `createEnterprise`: what its request named the enterprise it created.
    fn created(&mut self, entry: &Value, data: &Value) {
        let request = entry
            .pointer("/request/postData/text")
            .and_then(Value::as_str)
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .unwrap_or(Value::Null);
        if let Some(eg) = data.get("enterpriseGlobalId").and_then(Value::as_str) {
            let e = self.enterprise(eg);
            e.name = text(&request, "customerName").or(e.name.take());
            e.crm = text(&request, "crmCustomerId");
            e.branch = text(&request, "branchName");
            e.address = text(&request, "address");
        }
    }

    /// `listAssetNums` and (`lent`) `listLentLocks`: an enterprise's assets and their
    /// holders.
    fn assets(&mut self, eg: &str, data: &Value, lent: bool) {
        let e = self.enterprise(eg);
        for a in data.as_array().into_iter().flatten() {
            let (Some(num), Some(id)) = (text(a, "assetNum"), text(a, "assetId")) else {
                continue;
            };
            let holder = text(a, "cloudAccountGlobalId");
            let slot = e.assets.entry(num).or_insert((id, holder.clone(), lent));
            slot.2 |= lent;
            if slot.1.is_none() {
                slot.1 = holder;
            }
        }
    }

    /// `listMembers`: an enterprise's members, but for the accounts it was created with.
    fn members(&mut self, eg: &str, data: &Value) {
        let e = self.enterprise(eg);
        for m in data
            .get("list")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(id), Some(user)) = (text(m, "globalId"), text(m, "userName")) else {
                continue;
            };
            if e.members.iter().any(|(g, _, _)| *g == id) {
                continue;
            }
            let account = user.split('@').next().unwrap_or(&user).to_string();
            if CREATED_WITH_ENTERPRISE.contains(&account.as_str()) {
                continue;
            }
            let name = text(m, "name").unwrap_or_else(|| account.clone());
            e.members.push((id, account, name));
        }
    }

    /// The seed's enterprises, in the order first seen.
    fn into_seed(self) -> Vec<Value> {
        let Self {
            order,
            mut found,
            products,
        } = self;
        order
            .into_iter()
            .map(|eg| {
                let e = found.remove(&eg).unwrap_or_default();
                e.into_seed(&eg, &products)
            })
            .collect()
    }
}

/// `listAssetProducts`: an asset's license type (its first product's) and products.
fn products(data: &Value) -> (Option<String>, Vec<Value>) {
    let list = data.get("productInstanceList").and_then(Value::as_array);
    let license = list
        .and_then(|l| l.first())
        .and_then(|p| text(p, "licenseType"));
    let items = list
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let uri = text(p, "productUri")?;
            let mut item = json!({"productUri": uri});
            if let Some(name) = text(p, "productName") {
                item["productName"] = name.into();
            }
            if let Some(n) = p.get("limitConcurrent").and_then(Value::as_i64) {
                item["limitConcurrent"] = n.into();
            }
            Some(item)
        })
        .collect();
    (license, items)
}

impl Enterprise {
    /// The enterprise `eg` as the seed lists it, what the recording did not show made up.
    fn into_seed(self, eg: &str, products: &Products) -> Value {
        let (customers, assets) = (self.seed_customers(eg), self.seed_assets(products));
        let members = self.seed_members();
        let mut item = json!({
            "name": self.name.unwrap_or_else(|| format!("Enterprise {eg}")),
            "crmCustomerId": self.crm.unwrap_or_else(|| format!("CRM-{eg}")),
            "customers": customers,
            "assets": assets,
            "members": members,
        });
        if let Some(branch) = self.branch {
            item["branchName"] = branch.into();
        }
        if let Some(address) = self.address {
            item["address"] = address.into();
        }
        item
    }

    /// Its channel customers; one made up when it has assets but none was seen (an
    /// asset is bound to a customer).
    fn seed_customers(&self, eg: &str) -> Vec<Value> {
        let mut customers: Vec<Value> = self
            .customers
            .iter()
            .map(|(code, id)| json!({"channelCode": code, "channelCustomerId": id}))
            .collect();
        if customers.is_empty() && !self.assets.is_empty() {
            customers.push(json!({"channelCode": "SEED", "channelCustomerId": format!("CC-{eg}")}));
        }
        customers
    }

    /// Its assets with their products (a placeholder product when none was seen).
    fn seed_assets(&self, products: &Products) -> Vec<Value> {
        self.assets
            .iter()
            .map(|(num, (id, _, lent))| {
                let (license, items) = products.get(id).cloned().unwrap_or_default();
                let items = if items.is_empty() {
                    vec![json!({"productUri": "product"})]
                } else {
                    items
                };
                json!({
                    "key": num,
                    "licenseType": license.unwrap_or_else(|| "normal_recover_usbkey".into()),
                    "lentLock": lent,
                    "products": items,
                })
            })
            .collect()
    }

    /// Its members, each with the assets it holds (lent locks are not held).
    fn seed_members(&self) -> Vec<Value> {
        self.members
            .iter()
            .map(|(id, account, name)| {
                let held: Vec<&String> = self
                    .assets
                    .iter()
                    .filter(|(_, (_, holder, lent))| !lent && holder.as_deref() == Some(id))
                    .map(|(num, _)| num)
                    .collect();
                json!({"userName": account, "password": SEED_PASSWORD, "name": name, "assets": held})
            })
            .collect()
    }
}
