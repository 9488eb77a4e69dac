//! A partner's first program, written from the README and the SDK guide alone: a token
//! provider of its own, a batch order over allocated `ShellNumber`s, and a request the SDK
//! refuses before sending, matched as `Error::Validation`. Runs against the embedded
//! simulator.
//!
//! ```sh
//! cargo run --example partner
//! ```

use std::{sync::Mutex, time::Duration};

use licensing_sdk::{
    CachedToken, Error, LicenseType, SyncMode, ValidationError,
    auth::{CredentialsError, ExposeSecret, SecretString, TokenFuture, TokenProvider},
    member::{self, types as mt},
    order::{self, types as ot},
};

/// The application token, kept by another part of the program (here: set once).
struct Vault(Mutex<Option<SecretString>>);

impl TokenProvider for Vault {
    fn token(&self) -> TokenFuture<'_> {
        let token = self.0.lock().unwrap().clone();
        Box::pin(async move { token.ok_or_else(|| CredentialsError("vault is empty".into())) })
    }

    fn invalidate(&self, rejected: &SecretString) -> bool {
        let mut stored = self.0.lock().unwrap();
        if stored.as_ref().map(|t| t.expose_secret()) == Some(rejected.expose_secret()) {
            *stored = None;
        }
        false
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sim = licensing_sim::Simulator::builder().start().await?;

    let vault = Vault(Mutex::new(Some(SecretString::from(
        licensing_sim::DEFAULT_APP_TOKEN.to_string(),
    ))));
    let orders = order::Client::builder(&sim.url())
        .application_token_provider(vault)
        .build()?;
    // The user token from a login function, cached until shortly before it expires.
    let user = CachedToken::new(|| async {
        Ok((licensing_sim::DEFAULT_USER_TOKEN, Duration::from_secs(3600)))
    });
    let members = member::Client::builder(&sim.url())
        .client_token(licensing_sim::DEFAULT_CLIENT_TOKEN)
        .user_token_provider(user)
        .build()?;

    let customer = orders
        .bind_enterprise()
        .body(
            ot::BindEnterpriseRequest::builder()
                .channel_code("CH01")
                .channel_customer_id("CC-1")
                .customer_name("Initech (CH01)")
                .branch_name("North")
                .enterprise_name("Initech")
                .password_mobile("13800000000"),
        )
        .await?;
    let eg = customer.enterprise_global_id.clone();

    // Two asset numbers, sold in one new_buy order, then one returned.
    let numbers: Vec<ot::ShellNumber> = orders
        .allocate_shell_nums()
        .body(ot::AllocateShellNumsRequest::builder().size(2u32))
        .await?;
    let product = ot::Product::builder()
        .crm_product_id("P-1")
        .parent_crm_product_id("A-1")
        .product_uri("cad")
        .product_name("CAD")
        .product_type("software")
        .limit_concurrent(1)
        .limit_time_duration(0)
        .trial(licensing_sdk::Trial::NotTrial)
        .trial_end_date(0)
        .time_unit("year")
        .time_unit_quantity(1)
        .time_duration_expression("1-0-0")
        .product_features([]);
    let buy = ot::LicenseOrder::new_buy()
        .sequence(1)
        .customer_id(&customer.customer_id)
        .enterprise_global_id(&eg)
        .license_type(LicenseType::NormalRecoverUsbkey)
        .crm_customer_id("CRM-1")
        .customer_name("Initech")
        .channel_customer_id("CC-1")
        .customer_type(licensing_sdk::CustomerType::Company)
        .admin_name("Ada")
        .admin_account("ada")
        .admin_email("ada@example.com")
        .admin_cell_number("13800000000")
        .password_mobile("13800000000")
        .address("1 Main St")
        .branch_code("BR1")
        .branch_name("North")
        .assets(vec![
            ot::Asset::builder()
                .asset_nos(&numbers)
                .products(vec![product]),
        ]);
    let revoke = ot::LicenseOrder::delete_asset(
        2,
        &customer.customer_id,
        &eg,
        LicenseType::NormalRecoverUsbkey,
        &numbers[1..],
    );
    orders
        .batch_order()
        .app_key("APP_KEY")
        .body(
            ot::BatchOrderRequest::builder()
                .channel_code("CH01")
                .channel_order_id("CO-1")
                .sync_mode(SyncMode::Sync)
                .order_list(vec![buy]),
        )
        .await?;
    orders
        .batch_order()
        .app_key("APP_KEY")
        .body(
            ot::BatchOrderRequest::builder()
                .channel_code("CH01")
                .channel_order_id("CO-2")
                .sync_mode(SyncMode::Sync)
                .order_list(vec![revoke]),
        )
        .await?;
    let held = members.list_asset_nums().enterprise_global_id(&eg).await?;
    assert_eq!(held.len(), 1, "one of the two numbers was returned");
    assert_eq!(held[0].asset_num, numbers[0].as_str());

    // An employee list of 101 breaks a documented rule: refused before sending.
    let too_many: Vec<_> = (0..101)
        .map(|i| {
            mt::NewMember::builder()
                .user_name(format!("user{i}"))
                .name("N")
                .password("Initial-Pass-1")
        })
        .collect();
    match members
        .add_members()
        .enterprise_global_id(&eg)
        .body(mt::AddMembersRequest::builder().user_list(too_many))
        .await
    {
        Err(Error::Validation(ValidationError { field, rule, .. })) => {
            println!("refused before sending: `{field}` {rule}");
            assert_eq!(field, "userList");
        }
        other => return Err(format!("expected a validation error, got {other:?}").into()),
    }

    sim.shutdown().await?;
    println!("partner program: done");
    Ok(())
}
