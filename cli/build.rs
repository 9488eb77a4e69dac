//! Generates every service command of `licensing` from the specs into
//! `$OUT_DIR/commands.rs` (`src/ops.rs` includes it), with the generator the SDK's own
//! build script uses (`licensing_codegen::cli`, with its tests).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    licensing_codegen::cli::build_script(&[
        ("order", "../spec/order.yaml"),
        ("member", "../spec/member.yaml"),
    ]);
}
