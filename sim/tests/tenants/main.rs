//! Tenants over real sockets: sandboxes of their own in one simulator, each under its
//! prefix `/t/{id}`, isolated from each other and from the default tenant.

mod isolation;
mod lifecycle;
mod story;
