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

/// `id`, noted in the order enterprises were first seen.
fn enterprise(id: &str, order: &mut Vec<String>) -> String {
    if !order.iter().any(|o| o == id) {
        order.push(id.to_string());
    }
    id.to_string()
}

/// `licensing-proxy seed from-recording FILE.har`: the seed as the sandbox's `Seed`.
pub fn seed_from_recording(path: &Path) -> Result<Seed, String> {
    let mut order: Vec<String> = Vec::new();
    let mut found: BTreeMap<String, Enterprise> = BTreeMap::new();
    // Products by asset id, from listAssetProducts.
    let mut products: BTreeMap<String, (Option<String>, Vec<Value>)> = BTreeMap::new();
    for entry in entries(path)? {
        let Some(reply) = entry
            .pointer("/response/content/text")
            .and_then(Value::as_str)
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
        else {
            continue;
        };
        if reply.get("code") != Some(&json!(0)) {
            continue;
        }
        let data = reply.get("data").cloned().unwrap_or(Value::Null);
        let url = entry
            .pointer("/request/url")
            .and_then(Value::as_str)
            .unwrap_or("");
        let operation = entry
            .get("_operationId")
            .and_then(Value::as_str)
            .unwrap_or("");
        let path_eg = after(url, "/enterprise/").map(str::to_string);
        match operation {
            "queryEnterprise" => {
                for c in data.as_array().into_iter().flatten() {
                    let Some(eg) = text(c, "enterpriseGlobalId") else {
                        continue;
                    };
                    let e = found.entry(enterprise(&eg, &mut order)).or_default();
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
            "createEnterprise" => {
                let request = entry
                    .pointer("/request/postData/text")
                    .and_then(Value::as_str)
                    .and_then(|t| serde_json::from_str::<Value>(t).ok())
                    .unwrap_or(Value::Null);
                if let Some(eg) = data.get("enterpriseGlobalId").and_then(Value::as_str) {
                    let e = found.entry(enterprise(eg, &mut order)).or_default();
                    e.name = text(&request, "customerName").or(e.name.take());
                    e.crm = text(&request, "crmCustomerId");
                    e.branch = text(&request, "branchName");
                    e.address = text(&request, "address");
                }
            }
            "listAssetNums" | "listLentLocks" => {
                let Some(eg) = path_eg.as_deref() else {
                    continue;
                };
                let e = found.entry(enterprise(eg, &mut order)).or_default();
                for a in data.as_array().into_iter().flatten() {
                    let (Some(num), Some(id)) = (text(a, "assetNum"), text(a, "assetId")) else {
                        continue;
                    };
                    let holder = text(a, "cloudAccountGlobalId");
                    let lent = operation == "listLentLocks";
                    let slot = e.assets.entry(num).or_insert((id, holder.clone(), lent));
                    slot.2 |= lent;
                    if slot.1.is_none() {
                        slot.1 = holder;
                    }
                }
            }
            "listMembers" => {
                let Some(eg) = path_eg.as_deref() else {
                    continue;
                };
                let e = found.entry(enterprise(eg, &mut order)).or_default();
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
            "listAssetProducts" => {
                let Some(asset) = after(url, "/asset/") else {
                    continue;
                };
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
                products.insert(asset.to_string(), (license, items));
            }
            _ => {}
        }
    }
    let mut enterprises = Vec::new();
    for eg in order {
        let e = found.remove(&eg).unwrap_or_default();
        let mut customers: Vec<Value> = e
            .customers
            .iter()
            .map(|(code, id)| json!({"channelCode": code, "channelCustomerId": id}))
            .collect();
        if customers.is_empty() && !e.assets.is_empty() {
            customers.push(json!({"channelCode": "SEED", "channelCustomerId": format!("CC-{eg}")}));
        }
        let assets: Vec<Value> = e
            .assets
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
            .collect();
        let members: Vec<Value> = e
            .members
            .iter()
            .map(|(id, account, name)| {
                let held: Vec<&String> = e
                    .assets
                    .iter()
                    .filter(|(_, (_, holder, lent))| !lent && holder.as_deref() == Some(id))
                    .map(|(num, _)| num)
                    .collect();
                json!({"userName": account, "password": SEED_PASSWORD, "name": name, "assets": held})
            })
            .collect();
        let mut item = json!({
            "name": e.name.unwrap_or_else(|| format!("Enterprise {eg}")),
            "crmCustomerId": e.crm.unwrap_or_else(|| format!("CRM-{eg}")),
            "customers": customers,
            "assets": assets,
            "members": members,
        });
        if let Some(branch) = e.branch {
            item["branchName"] = branch.into();
        }
        if let Some(address) = e.address {
            item["address"] = address.into();
        }
        enterprises.push(item);
    }
    parse_seed(&json!({"enterprises": enterprises}).to_string())
        .map_err(|e| format!("{}: the seed made from it is refused: {e}", path.display()))
}
