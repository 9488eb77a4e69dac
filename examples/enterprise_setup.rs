//! Enterprise setup: create an enterprise main account, bind a channel customer to it,
//! and find the customer again with `query_enterprise`.
//!
//! `create_enterprise` answers with the enterprise's global id and the employees created
//! with it, but not with a `customerId`. The `customerId` an order names is the channel
//! customer's, which `bind_enterprise` returns and `query_enterprise` finds later (keep
//! the channel code and channel customer id, not the create reply).
//!
//! Runs against an empty in-process simulator:
//!
//! ```sh
//! cargo run --example enterprise_setup
//! ```

use std::error::Error as StdError;

use licensing_sdk::{DefaultCustomer, order, order::errors::BindEnterpriseErrorCode};
use licensing_sim as sim;

#[tokio::main]
async fn main() -> Result<(), Box<dyn StdError>> {
    let simulator = sim::Simulator::builder().start().await?;
    let url = simulator.url();
    let orders = order::Client::builder(&url)
        .application_token(sim::DEFAULT_APP_TOKEN)
        .build()?;

    // 1. The enterprise main account, from the CRM customer. Its name is the key that
    //    `bind_enterprise` joins on below.
    let created = orders
        .create_enterprise()
        .body(
            order::types::CreateEnterpriseRequest::builder()
                .crm_customer_id("CRM-GLOBEX")
                .customer_name("Globex Engineering")
                .branch_name("South")
                .address("12 Harbour Road"), // optional: a plain value, Some(..) or None
        )
        .await?;
    let eg = created.enterprise_global_id.clone();
    println!(
        "created enterprise {eg} (default customer: {})",
        created.default_type
    );
    for member in &created.members {
        println!(
            "  with employee {} ({})",
            member.member_identity, member.member_global_id
        );
    }

    // 2. Bind the channel customer (channel CH01, our customer number CC-GLOBEX) to it.
    //    `enterpriseName` must be the enterprise's name exactly: an unknown name creates
    //    a new enterprise with this customer as its default.
    let bind = || {
        orders.bind_enterprise().body(
            order::types::BindEnterpriseRequest::builder()
                .channel_code("CH01")
                .channel_customer_id("CC-GLOBEX")
                .customer_name("Globex Engineering (CH01)")
                .branch_name("South")
                .enterprise_name("Globex Engineering")
                .password_mobile("13800000000"),
        )
    };
    let bound = bind().await?;
    println!(
        "bound CH01/{} as customer {} of {} ({})",
        bound.channel_customer_id,
        bound.customer_id,
        bound.enterprise_name,
        bound.enterprise_global_id
    );
    assert_eq!(
        bound.enterprise_global_id, eg,
        "the customer joined the created enterprise"
    );
    assert!(!bound.is_default, "the CRM customer stays the default one");

    // 3. Later (another process, another day): find the customer from the channel ids.
    //    `All` lists every customer of the enterprise the channel customer is bound to;
    //    `OnlyDefault` only its default customer.
    let query = |channel_customer_id, default_customer| {
        orders
            .query_enterprise()
            .channel_code("CH01")
            .channel_customer_id(channel_customer_id)
            .default_customer(default_customer)
    };
    let customers = query("CC-GLOBEX", DefaultCustomer::All).await?;
    for c in &customers {
        let channel = match c.channel_code.as_str() {
            "" => "no channel".to_string(),
            code => format!("channel {code}/{}", c.channel_customer_id),
        };
        let default = if c.is_default { ", default" } else { "" };
        println!("  customer {} ({channel}{default})", c.customer_id);
    }
    let ours = customers
        .iter()
        .find(|c| c.channel_code == "CH01" && c.channel_customer_id == "CC-GLOBEX")
        .ok_or("the bound channel customer is not listed")?;
    assert_eq!(ours.customer_id, bound.customer_id);
    assert_eq!(ours.enterprise_global_id, eg);
    println!(
        "an order for CC-GLOBEX names customerId {} in {eg}",
        ours.customer_id
    );

    let defaults = query("CC-GLOBEX", DefaultCustomer::OnlyDefault).await?;
    assert_eq!(defaults.len(), 1, "one default customer: {defaults:?}");
    assert!(defaults[0].is_default && defaults[0].customer_id != bound.customer_id);

    // 4. A channel customer is bound once; binding it again is a business error (13004,
    //    the order service's only parameter code), typed per operation.
    match bind().await {
        Err(e) => match BindEnterpriseErrorCode::of(&e) {
            Some(BindEnterpriseErrorCode::ParameterValidationFailed) => {
                println!("binding again refused: {e}");
            }
            _ => return Err(format!("expected 13004, got {e}").into()),
        },
        Ok(again) => return Err(format!("bound twice: {again:?}").into()),
    }

    // An unknown channel customer is not an error: the list is empty.
    let unknown = query("CC-NOBODY", DefaultCustomer::All).await?;
    assert!(unknown.is_empty());

    simulator.shutdown().await?;
    println!("enterprise setup ok");
    Ok(())
}
