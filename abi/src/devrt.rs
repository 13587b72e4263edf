//! Static libraries in simtwin's JIT links (the driver's cuLink* and simtwin's
//! libnvJitLink.so.13): `libcudadevrt.a` and other `ar` archives given as a library input.
//!
//! simtwin links PTX only, and an archive's members are host objects whose device code is
//! SASS. The links follow static-library semantics: an archive contributes only what
//! defines a function the linked PTX still leaves undefined once every PTX input is in.
//! When nothing is left undefined the archive is accepted and unused. When something is:
//! - `libcudadevrt.a` (the archive holds `cuda_device_runtime.o`): the cooperative-groups
//!   entry points numba-cuda and other JIT users call for a grid group,
//!   `cudaCGGetIntrinsicHandle` and `cudaCGSynchronize`, come from simtwin's own PTX
//!   ([`DEVRT_CG_PTX`], written from the CUDA programming guide's grid-group semantics
//!   and the grid barrier nvcc's cooperative_groups header compiles to: the grid
//!   workspace of a cooperative launch is `%envreg1:%envreg2`, its barrier counter the
//!   word at offset 4), standing in for the member that defines them on a device;
//! - anything else a member would have to define: the link fails, naming the symbol and
//!   the archive (simtwin cannot run the member's SASS).

/// One member of an archive: its name and size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The member's file name (GNU long names resolved).
    pub name: String,
    /// Its size in bytes.
    pub size: usize,
}

/// An archive given to a link: its name (the file or the program's label) and members.
#[derive(Clone, Debug)]
pub struct Archive {
    /// What the program called it.
    pub name: String,
    /// Its members (the symbol table and long-name table left out).
    pub members: Vec<Member>,
}

impl Archive {
    /// Reads an `ar` archive (`!<arch>\n` and 60-byte member headers); a clear message for
    /// anything else or a truncated one. Reads only within `bytes`.
    pub fn read(name: &str, bytes: &[u8]) -> Result<Archive, String> {
        const MAGIC: &[u8] = b"!<arch>\n";
        if !bytes.starts_with(MAGIC) {
            return Err(format!("{name}: a library input must be an ar archive (it does not start with !<arch>)"));
        }
        let mut at = MAGIC.len();
        let mut long_names: &[u8] = &[];
        let mut members = Vec::new();
        while at < bytes.len() {
            let Some(h) = bytes.get(at..at + 60) else {
                return Err(format!("{name}: truncated ar member header at byte {at}"));
            };
            if &h[58..60] != b"`\n" {
                return Err(format!("{name}: malformed ar member header at byte {at}"));
            }
            let field = |r: std::ops::Range<usize>| String::from_utf8_lossy(&h[r]).trim_end().to_string();
            let size: usize = field(48..58).parse().map_err(|_| format!("{name}: bad member size in the header at byte {at}"))?;
            let start = at + 60;
            let Some(data) = bytes.get(start..start.saturating_add(size)) else {
                return Err(format!("{name}: member at byte {at} runs past the archive's end"));
            };
            let raw = field(0..16);
            if raw == "//" {
                long_names = data;
            } else if raw != "/" && raw != "/SYM64/" {
                let member = match raw.strip_prefix('/').and_then(|n| n.parse::<usize>().ok()) {
                    Some(off) => {
                        let rest = long_names.get(off..).unwrap_or_default();
                        let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
                        String::from_utf8_lossy(&rest[..end]).trim_end_matches('/').to_string()
                    }
                    None => raw.trim_end_matches('/').to_string(),
                };
                members.push(Member { name: member, size });
            }
            at = start + size + (size & 1);
        }
        Ok(Archive { name: name.to_string(), members })
    }

    /// The CUDA device runtime's archive (`libcudadevrt.a`: member cuda_device_runtime.o).
    pub fn is_cudadevrt(&self) -> bool {
        self.members.iter().any(|m| m.name == "cuda_device_runtime.o")
    }
}

/// Functions a set of PTX modules declares `.extern` and none of them defines.
pub fn undefined_functions(modules: &[String]) -> Vec<String> {
    let mut declared = Vec::new();
    let mut defined = std::collections::HashSet::new();
    for m in modules {
        for (name, ext, body) in functions(m) {
            if body {
                defined.insert(name);
            } else if ext && !declared.contains(&name) {
                declared.push(name);
            }
        }
    }
    declared.retain(|n| !defined.contains(n));
    declared
}

/// The `.func`/`.entry` directives at the top level of `ptx`: (name, `.extern`, has a body).
fn functions(ptx: &str) -> Vec<(String, bool, bool)> {
    let text = strip_comments(ptx);
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut start) = (0, 0);
    while i < b.len() {
        match b[i] {
            b';' | b'{' => {
                let stmt = &text[start..i];
                let body = b[i] == b'{';
                if let Some(name) = func_name(stmt) {
                    out.push((name, stmt.split_whitespace().any(|w| w == ".extern"), body));
                }
                if body {
                    // Skip the body to its matching brace.
                    let mut depth = 0usize;
                    while i < b.len() {
                        match b[i] {
                            b'{' => depth += 1,
                            b'}' => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The function a directive statement declares, if it is a `.func` or `.entry`.
fn func_name(stmt: &str) -> Option<String> {
    let at = [".func", ".entry"].iter().filter_map(|k| find_word(stmt, k).map(|p| p + k.len())).min()?;
    let mut rest = stmt[at..].trim_start();
    if rest.starts_with('(') {
        let close = rest.find(')')?;
        rest = rest[close + 1..].trim_start();
    }
    let name: String = rest.chars().take_while(|&c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.')).collect();
    (!name.is_empty()).then_some(name)
}

/// Where `word` occurs in `s` as a whole directive word.
fn find_word(s: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = s[from..].find(word) {
        let at = from + p;
        let after = s[at + word.len()..].chars().next();
        if !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// `ptx` without `//` and `/* */` comments (string literals do not occur at the top level
/// of PTX).
fn strip_comments(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut rest = ptx;
    while !rest.is_empty() {
        let line = rest.find("//");
        let block = rest.find("/*");
        match (line, block) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |e| &rest[l + e..]);
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                out.push(' ');
                rest = rest[b + 2..].find("*/").map_or("", |e| &rest[b + 2 + e + 2..]);
            }
            _ => {
                out.push_str(rest);
                rest = "";
            }
        }
    }
    out
}

/// The functions [`DEVRT_CG_PTX`] defines.
pub const DEVRT_CG_FUNCTIONS: &[&str] = &["cudaCGGetIntrinsicHandle", "cudaCGSynchronize"];

/// simtwin's PTX for the cooperative-groups entry points of the CUDA device runtime:
/// `cudaCGGetIntrinsicHandle(scope)` answers the grid workspace for scope 1 (the grid;
/// 0 outside a cooperative launch, and for other scopes), `cudaCGSynchronize(handle,
/// flags)` is a grid barrier on it (0; 999, cudaErrorUnknown, for a null handle, as the
/// archive's own PTX answers). Every thread of every block must call it, as for
/// `grid_group::sync`.
pub const DEVRT_CG_PTX: &str = r#"//
// simtwin: the cooperative-groups entry points of the CUDA device runtime (libcudadevrt.a),
// linked in place of its SASS member (simtwin-abi devrt.rs).
//
.version 7.0
.target sm_70
.address_size 64

.visible .func (.param .b64 func_retval0) cudaCGGetIntrinsicHandle(
	.param .b32 cudaCGGetIntrinsicHandle_param_0
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<4>;

	ld.param.u32 	%r1, [cudaCGGetIntrinsicHandle_param_0];
	mov.u64 	%rd1, 0;
	setp.ne.s32 	%p1, %r1, 1;
	@%p1 bra 	$L__simtwin_handle_done;
	mov.u32 	%r2, %envreg1;
	mov.u32 	%r3, %envreg2;
	cvt.u64.u32 	%rd2, %r2;
	cvt.u64.u32 	%rd3, %r3;
	shl.b64 	%rd2, %rd2, 32;
	or.b64 	%rd1, %rd2, %rd3;
$L__simtwin_handle_done:
	st.param.b64 	[func_retval0], %rd1;
	ret;
}

.visible .func (.param .b32 func_retval0) cudaCGSynchronize(
	.param .b64 cudaCGSynchronize_param_0,
	.param .b32 cudaCGSynchronize_param_1
)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<20>;
	.reg .b64 	%rd<3>;

	ld.param.u64 	%rd1, [cudaCGSynchronize_param_0];
	mov.u32 	%r1, 999;
	setp.eq.s64 	%p1, %rd1, 0;
	@%p1 bra 	$L__simtwin_sync_done;
	add.s64 	%rd2, %rd1, 4;
	barrier.sync 	0;
	mov.u32 	%r2, %tid.x;
	mov.u32 	%r3, %tid.y;
	mov.u32 	%r4, %tid.z;
	or.b32 	%r5, %r2, %r3;
	or.b32 	%r5, %r5, %r4;
	setp.ne.s32 	%p2, %r5, 0;
	@%p2 bra 	$L__simtwin_sync_block;
	mov.u32 	%r6, %ctaid.x;
	mov.u32 	%r7, %ctaid.y;
	mov.u32 	%r8, %ctaid.z;
	or.b32 	%r9, %r6, %r7;
	or.b32 	%r9, %r9, %r8;
	setp.eq.s32 	%p3, %r9, 0;
	mov.u32 	%r10, %nctaid.x;
	mov.u32 	%r11, %nctaid.y;
	mov.u32 	%r12, %nctaid.z;
	mul.lo.s32 	%r13, %r10, %r11;
	mul.lo.s32 	%r13, %r13, %r12;
	mov.u32 	%r14, -2147483647;
	sub.s32 	%r15, %r14, %r13;
	selp.b32 	%r16, %r15, 1, %p3;
	atom.add.release.gpu.u32 	%r17, [%rd2], %r16;
$L__simtwin_sync_spin:
	ld.acquire.gpu.u32 	%r18, [%rd2];
	xor.b32 	%r19, %r18, %r17;
	setp.gt.s32 	%p2, %r19, -1;
	@%p2 bra 	$L__simtwin_sync_spin;
$L__simtwin_sync_block:
	barrier.sync 	0;
	mov.u32 	%r1, 0;
$L__simtwin_sync_done:
	st.param.b32 	[func_retval0], %r1;
	ret;
}
"#;

/// What a link with archives does once every PTX input is in: the PTX modules to add
/// (simtwin's stand-ins), and one info line per archive; or an error naming a symbol
/// that only an archive's SASS could define.
pub fn resolve(modules: &[String], archives: &[Archive]) -> Result<(Vec<String>, Vec<String>), String> {
    let mut add = Vec::new();
    let mut notes = Vec::new();
    if archives.is_empty() {
        return Ok((add, notes));
    }
    let undefined = undefined_functions(modules);
    let devrt = archives.iter().find(|a| a.is_cudadevrt());
    let (from_devrt, rest): (Vec<&String>, Vec<&String>) =
        undefined.iter().partition(|n| devrt.is_some() && DEVRT_CG_FUNCTIONS.contains(&n.as_str()));
    if let Some(n) = rest.first() {
        let names: Vec<&str> = archives.iter().map(|a| a.name.as_str()).collect();
        return Err(format!(
            "undefined reference to `{n}`{}: only the SASS objects of {} could define it, and simtwin links PTX only (it runs no SASS; simtwin stands in for libcudadevrt.a's {} only)",
            if rest.len() > 1 { format!(" (and {} more)", rest.len() - 1) } else { String::new() },
            names.join(", "),
            DEVRT_CG_FUNCTIONS.join(" and ")
        ));
    }
    for a in archives {
        let used = devrt.is_some_and(|d| std::ptr::eq(d, a)) && !from_devrt.is_empty();
        if used {
            let names: Vec<&str> = from_devrt.iter().map(|s| s.as_str()).collect();
            notes.push(format!(
                "{}: {} from simtwin's PTX for the device runtime's cooperative groups (in place of its SASS member cuda_device_runtime.o)",
                a.name,
                names.join(", ")
            ));
        } else {
            notes.push(format!("{}: accepted and unused (the linked PTX leaves nothing for it to define)", a.name));
        }
    }
    if !from_devrt.is_empty() {
        add.push(DEVRT_CG_PTX.to_string());
    }
    Ok((add, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ar(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut v = b"!<arch>\n".to_vec();
        for (n, d) in members {
            v.extend_from_slice(format!("{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n", format!("{n}/"), 0, 0, 0, 644, d.len()).as_bytes());
            v.extend_from_slice(d);
            if d.len() % 2 == 1 {
                v.push(b'\n');
            }
        }
        v
    }

    #[test]
    fn archives_are_read_and_bad_ones_refused() {
        let a = Archive::read("lib.a", &ar(&[("a.o", b"abc"), ("b.o", b"xy")])).unwrap();
        assert_eq!(a.members, vec![Member { name: "a.o".into(), size: 3 }, Member { name: "b.o".into(), size: 2 }]);
        assert!(!a.is_cudadevrt());
        assert!(Archive::read("x", b"not an archive").unwrap_err().contains("ar archive"));
        let mut t = ar(&[("a.o", b"abcdef")]);
        t.truncate(t.len() - 2);
        assert!(Archive::read("x", &t).unwrap_err().contains("past the archive's end"));
    }

    #[test]
    fn undefined_functions_are_externs_nobody_defines() {
        let a = ".version 8.0\n.target sm_90\n.address_size 64\n// .extern .func commented();\n.extern .func (.param .b64 func_retval0) cudaCGGetIntrinsicHandle\n(\n.param .b32 p\n)\n;\n.extern .func (.param .b32 r) helper(.param .b32 x);\n.visible .entry k() { { .reg .b32 %r<2>; } ret; }\n";
        let b = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .func (.param .b32 r) helper(.param .b32 x) { ret; }\n";
        assert_eq!(undefined_functions(&[a.into(), b.into()]), vec!["cudaCGGetIntrinsicHandle".to_string()]);
        assert_eq!(undefined_functions(&[a.into(), b.into(), DEVRT_CG_PTX.into()]), Vec::<String>::new());
    }

    #[test]
    fn resolution_follows_static_library_semantics() {
        let devrt = Archive { name: "libcudadevrt.a".into(), members: vec![Member { name: "cuda_device_runtime.o".into(), size: 1 }] };
        let plain = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n".to_string();
        let (add, notes) = resolve(std::slice::from_ref(&plain), std::slice::from_ref(&devrt)).unwrap();
        assert!(add.is_empty() && notes[0].contains("accepted and unused"), "{notes:?}");
        let cg = ".version 8.0\n.target sm_90\n.address_size 64\n.extern .func (.param .b32 r) cudaCGSynchronize(.param .b64 h, .param .b32 f);\n".to_string();
        let (add, notes) = resolve(std::slice::from_ref(&cg), std::slice::from_ref(&devrt)).unwrap();
        assert_eq!(add, vec![DEVRT_CG_PTX.to_string()]);
        assert!(notes[0].contains("cudaCGSynchronize"), "{notes:?}");
        let other =
            ".version 8.0\n.target sm_90\n.address_size 64\n.extern .func (.param .b32 r) cudaGetDevice(.param .b64 d);\n".to_string();
        let e = resolve(std::slice::from_ref(&other), std::slice::from_ref(&devrt)).unwrap_err();
        assert!(e.contains("`cudaGetDevice`") && e.contains("libcudadevrt.a"), "{e}");
        // Another archive does not stand in for the device runtime.
        let lib = Archive { name: "libfoo.a".into(), members: vec![Member { name: "foo.o".into(), size: 1 }] };
        assert!(resolve(&[cg], &[lib]).unwrap_err().contains("`cudaCGSynchronize`"));
        // No archive: nothing changes (undefined functions are the loader's to report).
        assert_eq!(resolve(&[other], &[]).unwrap(), (vec![], vec![]));
    }
}
