//! Texture and surface instructions (`tex`, `tld4`, `txq`, `suld`, `sust`, `suq`) with
//! texture/surface objects (unified mode: the handle is a 64-bit register or
//! parameter). Each becomes one `simtwin_tex_request_t` passed to the runtime table's
//! `texture` entry, the same the host twins' texture functions call, so both execution
//! modes sample through one implementation in the driver.

use super::func::{ctype, FnEmitter};
use crate::ast::Ty;
use crate::resolve::{Instr, Op};
use crate::Error;
use std::fmt::Write;

/// Geometry modifier to the request's geometry code.
fn geometry(i: &Instr) -> Option<(u32, &'static str)> {
    for (m, g, n) in [
        (".1d", 0, "1d"),
        (".2d", 1, "2d"),
        (".3d", 2, "3d"),
        (".a1d", 3, "a1d"),
        (".a2d", 4, "a2d"),
        (".cube", 5, "cube"),
        (".acube", 6, "acube"),
        // Multi-sample: sampled as 2D / layered 2D (the request's geometry) at integer
        // coordinates with a sample index (see `tex`).
        (".2dms", 1, "2dms"),
        (".a2dms", 4, "a2dms"),
    ] {
        if i.src.has(m) {
            return Some((g, n));
        }
    }
    None
}

impl FnEmitter<'_> {
    /// The object handle and coordinate operands of `[handle, {c...}]`.
    fn tex_operands(&self, op: &Op) -> Result<(Op, Vec<Op>), Error> {
        match op {
            Op::Bracket(v) if v.len() == 2 => {
                let coords = match &v[1] {
                    Op::Vector(c) => c.clone(),
                    c => vec![c.clone()],
                };
                Ok((v[0].clone(), coords))
            }
            Op::Bracket(v) if v.len() == 3 => {
                Err(self
                    .unsupported("texture with a separate sampler (independent mode) is not emulated: only texture objects (unified mode)"))
            }
            _ => Err(self.unsupported("texture operand is not [handle, {coordinates}]")),
        }
    }

    fn tex_handle(&mut self, h: &Op) -> Result<String, Error> {
        match h {
            Op::Var(..) => {
                Err(self
                    .unsupported("texture and surface references (.texref/.surfref) are not emulated: only texture and surface objects"))
            }
            _ => self.val(h, Ty::U64),
        }
    }

    /// `tex`, `tld4`: d = {4 values}, [t, {coords}] (, lod | , dx, dy) (, offsets)
    /// (, depth compare).
    ///
    /// Results `.v4.f16` and `.v2.f16x2` (measured on the H200, conformance
    /// `ptx_texh_*`: every result, point and linear, float, half, u8x4, u16x2 and s8x2
    /// textures): the f32 result the sampler gives, rounded to half to nearest even
    /// (overflowing to infinity), every NaN as 0x7fff; element-type
    /// (`CU_TRSF_READ_AS_INTEGER`) reads of u8x4 give 0. The driver converts (result code
    /// 3) and answers the four halves packed in data[0] and data[1], low half first.
    ///
    /// `.2dms` / `.a2dms` (s32 coordinates {sample, x, y, -} / {a, b, x, y}): CUDA creates
    /// no multi-sample resource; over an ordinary array or pitch-2D memory the H200 reads
    /// texel (x, y) for sample 0 and 0 for every other sample, out-of-range texels and
    /// layers 0 (`ptx_texms_*`). For `.a2dms` it takes a as the sample and b as the layer
    /// (with a = 0, b = 0..2 read layers 0..2 of a 3-layer array; any a but 0 reads 0).
    pub(super) fn tex(&mut self, i: &Instr) -> Result<String, Error> {
        let gather = i.src.op == "tld4";
        let (geom, gname) = geometry(i).ok_or_else(|| self.unsupported("texture instruction without a geometry"))?;
        let tys = i.src.tys();
        let (dty, cty) = match tys.as_slice() {
            [d, c] => (*d, *c),
            _ => return Err(self.unsupported("texture instruction needs a result and a coordinate type")),
        };
        let half = matches!(dty, Ty::F16 | Ty::F16x2) && !gather;
        match dty {
            Ty::F16x2 if !i.src.has(".v2") => return Err(self.unsupported("texture result .f16x2 without .v2")),
            Ty::F16x2 => {}
            _ if !i.src.has(".v4") => return Err(self.unsupported("texture instruction without .v4")),
            _ => {}
        }
        let result = match dty {
            Ty::F32 => 0,
            Ty::S32 => 1,
            Ty::U32 => 2,
            Ty::F16 | Ty::F16x2 if half => 3,
            _ => return Err(self.unsupported(format!("texture result type .{}", dty.name()))),
        };
        let (h, coords) = self.tex_operands(self.arg(i, 1)?)?;
        let handle = self.tex_handle(&h)?;
        let t = self.fresh();
        let mut s = format!("::__simtwin::simtwin_tex_request_t {t}; memset(&{t}, 0, sizeof {t}); {t}.handle = {handle}; {t}.geometry = {geom}u; {t}.result = {result}u; ");
        let multisample = matches!(gname, "2dms" | "a2dms");
        if multisample && cty != Ty::S32 {
            return Err(self.unsupported("multi-sample texture with coordinates other than .s32"));
        }
        let mut cs = coords.iter();
        // Multi-sample geometries put the sample index first (the H200 reads a2dms's
        // {a, b, x, y} as sample a of layer b: ptx_texms_a2d).
        let sample = if multisample {
            let c = cs.next().ok_or_else(|| self.unsupported("multi-sample texture without a sample index"))?;
            Some(self.val(c, Ty::S32)?)
        } else {
            None
        };
        // Layered geometries put the layer (an integer) first.
        let layered = matches!(gname, "a1d" | "a2d" | "acube" | "a2dms");
        if layered {
            let l = cs.next().ok_or_else(|| self.unsupported("layered texture without a layer"))?;
            let v = self.val(l, Ty::S32)?;
            let _ = write!(s, "{t}.icoord[3] = {v}; ");
        }
        let n = match gname {
            "1d" | "a1d" => 1,
            "2d" | "a2d" | "2dms" | "a2dms" => 2,
            _ => 3,
        };
        for k in 0..n {
            let c = cs.next().ok_or_else(|| self.unsupported("texture coordinates missing"))?;
            if cty == Ty::F32 {
                let v = self.val(c, Ty::F32)?;
                let _ = write!(s, "{t}.coord[{k}] = {v}; ");
            } else {
                let v = self.val(c, Ty::S32)?;
                let _ = write!(s, "{t}.icoord[{k}] = {v}; ");
            }
        }
        if cty != Ty::F32 {
            let _ = write!(s, "{t}.flags = SIMTWIN_TEX_INT_COORDS; ");
        }
        let op = if gather {
            s.push_str(&self.tex_offset(i, 2, &t)?);
            let comp = [(".r", 0), (".g", 1), (".b", 2), (".a", 3)].iter().find(|(m, _)| i.src.has(m)).map(|c| c.1).unwrap_or(0);
            let _ = write!(s, "{t}.component = {comp}u; ");
            3
        } else if i.src.has(".level") {
            let lod = self.val(self.arg(i, 2)?, Ty::F32)?;
            let _ = write!(s, "{t}.lod = {lod}; ");
            s.push_str(&self.tex_offset(i, 3, &t)?);
            1
        } else if i.src.has(".grad") {
            for (k, a) in [2usize, 3].iter().enumerate() {
                let g = match self.arg(i, *a)? {
                    Op::Vector(v) => v.clone(),
                    o => vec![o.clone()],
                };
                for (j, c) in g.iter().take(3).enumerate() {
                    let v = self.val(c, Ty::F32)?;
                    let _ = write!(s, "{t}.grad[{}] = {v}; ", k * 3 + j);
                }
            }
            s.push_str(&self.tex_offset(i, 4, &t)?);
            2
        } else {
            s.push_str(&self.tex_offset(i, 2, &t)?);
            0
        };
        match sample {
            // Sample 0 is the texel; any other sample of a one-sample resource reads 0.
            Some(v) => {
                let _ = write!(s, "{t}.op = {op}u; if ((int32_t)({v}) == 0) tex_call(&{t}); ");
            }
            None => {
                let _ = write!(s, "{t}.op = {op}u; tex_call(&{t}); ");
            }
        }
        // `{d...}|p`: p is true when every texel the fetch read is resident, which all
        // texels of a texture object are (sparse CUDA arrays are not emulated).
        let (result, resident) = match self.arg(i, 0)?.clone() {
            Op::Pair(r, p) => (*r, Some(*p)),
            r => (r, None),
        };
        if let Some(p) = resident {
            s.push_str(&self.set(&p, Ty::Pred, "true")?);
            s.push(' ');
        }
        let Op::Vector(parts) = result else { return Err(self.unsupported("texture result is not a vector")) };
        let count = if dty == Ty::F16x2 { 2 } else { 4 };
        if parts.len() != count {
            return Err(self.unsupported(format!("texture result of {} registers (needs {count})", parts.len())));
        }
        for (k, p) in parts.iter().enumerate() {
            let e = match dty {
                // Four halves packed in data[0] and data[1], low half first.
                Ty::F16 => format!("(uint16_t)({t}.data[{}] >> {})", k / 2, 16 * (k % 2)),
                Ty::F16x2 => format!("{t}.data[{k}]"),
                _ => format!("rd<{}>({t}.data[{k}])", ctype(dty)),
            };
            s.push_str(&self.set(p, dty, &e)?);
            s.push(' ');
        }
        Ok(s)
    }

    /// The optional operands of `tex`/`tld4` from argument `at` on: a texel-offset vector
    /// (s32, one per coordinate: added to the texel indices the coordinates select, at
    /// whichever mip level is read), then a depth-compare value (a scalar f32). The
    /// compare changes nothing: texture objects have no compare function, and the H200
    /// returns exactly the plain fetch's results whatever the compare value (below, equal
    /// to or above the texel, NaN, infinite: `ptx_texdc_*`, tex with and without offsets,
    /// `.f16` results, point and linear, float and 16-bit unorm textures; tld4 with a
    /// compare value gives the plain gather's texels).
    fn tex_offset(&mut self, i: &Instr, at: usize, t: &str) -> Result<String, Error> {
        let mut s = String::new();
        let mut k = at;
        if let Some(Op::Vector(parts)) = i.args.get(k).map(|_| self.arg(i, k)).transpose()?.cloned() {
            for (j, p) in parts.iter().enumerate().take(3) {
                let v = self.val(p, Ty::S32)?;
                let _ = write!(s, "{t}.offset[{j}] = (int8_t)({v}); ");
            }
            k += 1;
        }
        if i.args.len() > k {
            // The depth-compare value: read (as the device reads the register), unused.
            let v = self.val(&self.arg(i, k)?.clone(), Ty::F32)?;
            let _ = write!(s, "(void)({v}); ");
            k += 1;
        }
        if i.args.len() > k {
            return Err(self.unsupported("texture instruction with more operands than offsets and a depth-compare value"));
        }
        Ok(s)
    }

    /// `txq.attr.b32 d, [t]` and `suq.attr.b32 d, [s]`.
    pub(super) fn txq(&mut self, i: &Instr) -> Result<String, Error> {
        let q = [
            (".width", 0),
            (".height", 1),
            (".depth", 2),
            (".channel_data_type", 3),
            (".channel_order", 4),
            (".normalized_coords", 5),
            (".filter_mode", 6),
            (".addr_mode_0", 7),
            (".addr_mode_1", 8),
            (".addr_mode_2", 9),
            (".array_size", 10),
            (".num_mipmap_levels", 11),
            (".num_samples", 12),
        ]
        .iter()
        .find(|(m, _)| i.src.has(m))
        .map(|x| x.1)
        .ok_or_else(|| self.unsupported("txq/suq attribute"))?;
        // txq.level.{width,height,depth} d, [t], lod: the size of one mip level.
        let level = i.src.op == "txq" && i.src.has(".level");
        if level && q > 2 {
            return Err(self.unsupported("txq.level of anything but width, height, depth"));
        }
        // Measured on the H200 (driver 580; conformance ptx_feature_txq_*/suq_*): a kernel
        // may query an object's sizes only. suq.array_size/channel_*/memory_layout fail the
        // module's load with CUDA_ERROR_NOT_SUPPORTED; txq of anything but width, height,
        // depth (and txq.level) fails the kernel's compilation: CUDA_ERROR_NOT_FOUND, from
        // the load under CUDA_MODULE_LOADING=EAGER, from the first cuModuleGetFunction of
        // the kernel under the default lazy loading (ptx_txq_lazy; the driver does both).
        if i.src.op == "suq" && matches!(q, 3 | 4 | 10) {
            return Err(self.refused(801, "suq of a surface's format or array size is refused at load"));
        }
        if i.src.op == "txq" && q > 2 {
            return Err(self.refused_kernel(500, "txq of anything but a texture's sizes fails the kernel's compilation"));
        }
        let h = match self.arg(i, 1)? {
            Op::Addr(..) | Op::Bracket(_) | Op::Reg(_) => self.arg(i, 1)?.clone(),
            o => o.clone(),
        };
        let handle = match &h {
            Op::Addr(crate::resolve::AddrBase::Reg(r), 0) => format!("(uint64_t)r{r}"),
            Op::Bracket(v) if v.len() == 1 => self.tex_handle(&v[0])?,
            Op::Reg(_) => self.tex_handle(&h)?,
            _ => return Err(self.unsupported("txq/suq operand is not [handle]")),
        };
        let t = self.fresh();
        let op = if i.src.op == "suq" { 7 } else { 6 };
        let (q, lod) = if level {
            let a = self.arg(i, 2)?.clone();
            let v = self.val(&a, Ty::S32)?;
            (q + 13, format!("{t}.icoord[0] = (int32_t)({v}); "))
        } else {
            (q, String::new())
        };
        let mut s = format!(
            "::__simtwin::simtwin_tex_request_t {t}; memset(&{t}, 0, sizeof {t}); {t}.handle = {handle}; {t}.op = {op}u; {t}.query = {q}u; {lod}tex_call(&{t}); "
        );
        s.push_str(&self.set(self.arg(i, 0)?, Ty::B32, &format!("{t}.data[0]"))?);
        Ok(s)
    }

    /// `suld.b.geom{.vN}.bT.mode d, [s, {x, y...}]` and `sust.b... [s, {...}], v`.
    pub(super) fn surface(&mut self, i: &Instr) -> Result<String, Error> {
        let store = i.src.op == "sust";
        // sust.p: a formatted store; x counts elements, the driver converts the words.
        let formatted = store && i.src.has(".p");
        let (geom, gname) = geometry(i).ok_or_else(|| self.unsupported("surface instruction without a geometry"))?;
        let ty = i.src.last_ty().ok_or_else(|| self.unsupported("surface instruction without a type"))?;
        let n: u32 = if i.src.has(".v4") {
            4
        } else if i.src.has(".v2") {
            2
        } else {
            1
        };
        let size = ty.size() * n;
        let clamp = if i.src.has(".clamp") {
            1
        } else if i.src.has(".zero") {
            2
        } else {
            0
        };
        let (h, coords) = self.tex_operands(self.arg(i, if store { 0 } else { 1 })?)?;
        let handle = self.tex_handle(&h)?;
        let t = self.fresh();
        let mut s = format!(
            "::__simtwin::simtwin_tex_request_t {t}; memset(&{t}, 0, sizeof {t}); {t}.handle = {handle}; {t}.geometry = {geom}u; {t}.size = {size}u; {t}.clamp = {clamp}u; "
        );
        let layered = matches!(gname, "a1d" | "a2d");
        let mut cs = coords.iter();
        if layered {
            let l = cs.next().ok_or_else(|| self.unsupported("layered surface without a layer"))?;
            let v = self.val(l, Ty::S32)?;
            let _ = write!(s, "{t}.icoord[3] = {v}; ");
        }
        let dims = match gname {
            "1d" | "a1d" => 1,
            "2d" | "a2d" => 2,
            _ => 3,
        };
        for k in 0..dims {
            let c = cs.next().ok_or_else(|| self.unsupported("surface coordinates missing"))?;
            let v = self.val(c, Ty::S32)?;
            let _ = write!(s, "{t}.icoord[{k}] = {v}; ");
        }
        let vals = match self.arg(i, if store { 1 } else { 0 })?.clone() {
            Op::Vector(v) => v,
            o => vec![o],
        };
        let ct = ctype(ty);
        if store {
            for (k, p) in vals.iter().enumerate() {
                let v = self.val(p, ty)?;
                let _ = write!(s, "{{ {ct} v = {v}; memcpy((char *){t}.data + {}, &v, sizeof v); }} ", k as u32 * ty.size());
            }
            let _ = write!(s, "{t}.op = {}u; tex_call(&{t});", if formatted { 8 } else { 5 });
        } else {
            let _ = write!(s, "{t}.op = 4u; tex_call(&{t}); ");
            for (k, p) in vals.iter().enumerate() {
                let e = format!("tex_part<{ct}>({t}.data, {})", k as u32 * ty.size());
                s.push_str(&self.set(p, ty, &e)?);
                s.push(' ');
            }
        }
        Ok(s)
    }
}
