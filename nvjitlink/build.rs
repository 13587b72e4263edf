// The installed name is libnvJitLink.so.13, so that is the SONAME; the exported entry
// points carry the version node `libnvJitLink.so.13` as NVIDIA's library's do (programs
// linked with -lnvJitLink ask for it).
fn main() {
    let map = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("exports.map");
    println!("cargo:rerun-if-changed={}", map.display());
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libnvJitLink.so.13");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={}", map.display());
}
