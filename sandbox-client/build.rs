//! Generates the sandbox admin client from `spec/sandbox.yaml` into `$OUT_DIR/sandbox.rs`,
//! with the same generator as the SDK's service clients.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    licensing_codegen::build_plain_client("sandbox", "spec/sandbox.yaml");
}
