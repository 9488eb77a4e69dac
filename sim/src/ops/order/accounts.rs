//! Enterprise accounts: bind, create, query, update.

use super::*;

/// Binds a channel customer to the enterprise named `enterpriseName`, creating that
/// enterprise (with this customer as its default) when no enterprise has the name.
pub(crate) fn bind_enterprise(sim: &Db, call: &Call) -> Result<o::EnterpriseCustomer, Failure> {
    let req: o::BindEnterpriseRequest = body(call)?;
    for (field, value) in [
        ("channelCode", &req.channel_code),
        ("channelCustomerId", &req.channel_customer_id),
        ("customerName", &req.customer_name),
        ("branchName", &req.branch_name),
        ("enterpriseName", &req.enterprise_name),
        ("passwordMobile", &req.password_mobile),
    ] {
        non_empty(field, value)?;
    }
    if !is_mobile_number(&req.password_mobile) {
        return Err(invalid("passwordMobile is not a valid mobile number"));
    }
    let mut state = sim.state_mut();
    if let Some(existing) = state
        .customer_by_channel
        .get(&req.channel_code, &req.channel_customer_id)
    {
        let enterprise = &state.customers[existing].enterprise;
        return Err(invalid(format!(
            "channel customer {}/{} is already bound to enterprise {enterprise}",
            req.channel_code, req.channel_customer_id
        )));
    }
    let channel = (req.channel_code.clone(), req.channel_customer_id.clone());
    let enterprise = match state.enterprise_by_name.get(&req.enterprise_name) {
        Some(eg) => eg.clone(),
        None => new_enterprise(sim, &mut state, &req.enterprise_name)?,
    };
    let id = state.new_customer(
        &enterprise,
        NewCustomer {
            name: req.customer_name,
            branch: req.branch_name,
            address: None,
            crm: None,
            channel: Some(channel),
        },
    );
    Ok(customer_record(&state, &state.customers[&id]))
}

/// Creates an enterprise main account named after the customer, with its default
/// customer, an industry customer, the industry administrator and a cloud employee.
pub(crate) fn create_enterprise(
    sim: &Db,
    call: &Call,
) -> Result<o::CreateEnterpriseResult, Failure> {
    let req: o::CreateEnterpriseRequest = body(call)?;
    non_empty("crmCustomerId", &req.crm_customer_id)?;
    non_empty("customerName", &req.customer_name)?;
    non_empty("branchName", &req.branch_name)?;
    let mut state = sim.state_mut();
    if let Some(existing) = state.customer_by_crm.get(&req.crm_customer_id) {
        let enterprise = &state.customers[existing].enterprise;
        return Err(invalid(format!(
            "crmCustomerId {} already belongs to enterprise {enterprise}",
            req.crm_customer_id
        )));
    }
    if let Some(eg) = state.enterprise_by_name.get(&req.customer_name) {
        return Err(invalid(format!(
            "an enterprise named {:?} already exists ({eg})",
            req.customer_name
        )));
    }
    let enterprise = new_enterprise(sim, &mut state, &req.customer_name)?;
    state.new_customer(
        &enterprise,
        NewCustomer {
            name: req.customer_name.clone(),
            branch: req.branch_name.clone(),
            address: req.address.clone(),
            crm: Some(req.crm_customer_id),
            channel: None,
        },
    );
    state.new_customer(
        &enterprise,
        NewCustomer {
            name: format!("{} (industry)", req.customer_name),
            branch: req.branch_name,
            address: req.address,
            crm: None,
            channel: None,
        },
    );
    let now = sim.clock.now_ms();
    let created = |state: &mut State, account: &str, name: &str, identity: &str| {
        let member_global_id = state.new_member(
            &enterprise,
            NewMember {
                account: account.to_string(),
                password: String::new(),
                name: name.to_string(),
                department: None,
                remark: None,
                mobile: None,
                trial: false,
            },
            now,
        );
        o::CreatedMember {
            member_global_id,
            member_identity: identity.to_string(),
        }
    };
    let members = vec![
        created(
            &mut state,
            "admin",
            "Industry administrator",
            "industry_admin",
        ),
        created(&mut state, "cloud", "Cloud employee", "cloud_employee"),
    ];
    Ok(o::CreateEnterpriseResult {
        enterprise_global_id: enterprise,
        default_type: true,
        members,
    })
}

/// The customers of the enterprise the channel customer is bound to: only the default
/// one with `Y`, all with `N`; none for an unbound channel customer.
pub(crate) fn query_enterprise(
    sim: &Db,
    call: &Call,
) -> Result<Vec<o::EnterpriseCustomer>, Failure> {
    let required = |name: &str| {
        call.query(name)
            .ok_or_else(|| invalid(format!("{name} is required")))
    };
    let channel_code = required("channelCode")?;
    let channel_customer_id = required("channelCustomerId")?;
    let only_default = match DefaultCustomer::from(required("defaultCustomer")?) {
        DefaultCustomer::OnlyDefault => true,
        DefaultCustomer::All => false,
        DefaultCustomer::Unknown(other) => {
            return Err(invalid(format!(
                "defaultCustomer must be Y or N (is {other:?})"
            )));
        }
    };
    let state = sim.state();
    let Some(bound) = state
        .customer_by_channel
        .get(channel_code, channel_customer_id)
    else {
        return Ok(Vec::new());
    };
    let enterprise = &state.enterprises[&state.customers[bound].enterprise];
    Ok(enterprise
        .customers
        .iter()
        .map(|id| &state.customers[id])
        .filter(|c| c.is_default || !only_default)
        .map(|c| customer_record(&state, c))
        .collect())
}

/// Changes the name, branch and (when given) address of the customer with the CRM id.
pub(crate) fn update_enterprise(sim: &Db, call: &Call) -> Result<(), Failure> {
    let req: o::UpdateEnterpriseRequest = body(call)?;
    non_empty("crmCustomerId", &req.crm_customer_id)?;
    non_empty("customerName", &req.customer_name)?;
    non_empty("branchName", &req.branch_name)?;
    let mut state = sim.state_mut();
    let Some(id) = state.customer_by_crm.get(&req.crm_customer_id).cloned() else {
        return Err(invalid(format!(
            "no customer with crmCustomerId {}",
            req.crm_customer_id
        )));
    };
    let customer = state
        .customers
        .get_mut(&id)
        .expect("the CRM index points at existing customers");
    customer.name = req.customer_name;
    customer.branch = req.branch_name;
    if req.address.is_some() {
        customer.address = req.address;
    }
    Ok(())
}

/// A new enterprise, when the state has room for one more.
fn new_enterprise(sim: &Db, state: &mut State, name: &str) -> Result<String, Failure> {
    let max = sim.config.max_enterprises;
    Settings::room(
        state.enterprises.len(),
        1,
        max,
        "enterprises",
        "--max-enterprises",
    )
    .map_err(invalid)?;
    Ok(state.new_enterprise(name))
}
