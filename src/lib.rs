pub mod order {
    include!(concat!(env!("OUT_DIR"), "/order.rs"));
}
pub mod member {
    include!(concat!(env!("OUT_DIR"), "/member.rs"));
}
