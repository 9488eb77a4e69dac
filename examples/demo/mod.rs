//! The start the task examples share (`employee_onboarding`, `lending`, `locks`,
//! `month_end_batch`): the in-process simulator with its `demo` seed, a client of each
//! service with the simulator's tokens, and Acme Robotics as the channel CH01 knows it
//! (`CC-ACME`). A program of its own builds its clients the same way with its own tokens
//! (or a token provider of its own: `examples/partner.rs`).

use std::error::Error as StdError;

use licensing_sdk::{DefaultCustomer, member, order, order::types::EnterpriseCustomer};
use licensing_sim as sim;

/// Starts the simulator with the `demo` seed and builds a client of each service against
/// it. The simulator serves until `simulator.shutdown()`, which each example awaits at its
/// end.
pub async fn start() -> Result<(sim::Simulator, order::Client, member::Client), Box<dyn StdError>> {
    let demo = sim::admin::builtin_seed("demo").expect("the demo seed is built in");
    let simulator = sim::Simulator::builder().seed(demo).start().await?;
    let url = simulator.url();
    let orders = order::Client::builder(&url)
        .application_token(sim::DEFAULT_APP_TOKEN)
        .build()?;
    let members = member::Client::builder(&url)
        .client_token(sim::DEFAULT_CLIENT_TOKEN)
        .user_token(sim::DEFAULT_USER_TOKEN)
        .build()?;
    Ok((simulator, orders, members))
}

/// The customer the channel customer CH01/CC-ACME is, found from its channel ids: its
/// `customerId` is what an order names, its `enterpriseGlobalId` (Acme's enterprise main
/// account) what a member-center call names.
pub async fn acme(orders: &order::Client) -> Result<EnterpriseCustomer, Box<dyn StdError>> {
    let customers = orders
        .query_enterprise()
        .channel_code("CH01")
        .channel_customer_id("CC-ACME")
        .default_customer(DefaultCustomer::All)
        .await?;
    let acme = customers
        .into_iter()
        .find(|c| c.channel_customer_id == "CC-ACME")
        .ok_or("CC-ACME is not bound")?;
    Ok(acme)
}
