fn main() {
    // Programs dlopen "libcuda.so.1"; the library must carry that SONAME.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
    println!("cargo:rerun-if-changed=build.rs");
}
