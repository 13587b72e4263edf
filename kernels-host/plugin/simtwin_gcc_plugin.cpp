/*
 * simtwin's GCC plugin: device-defined results where C++ leaves them undefined.
 *
 * A GIMPLE pass, right after the CFG is built (before inlining and any optimization),
 * replaces in user code
 *   - every conversion from float or double to an integer (FIX_TRUNC_EXPR: explicit and
 *     implicit casts, every destination width, signed and unsigned),
 *   - every integer division and remainder whose divisor is not a constant other than
 *     0 and -1 (TRUNC_DIV_EXPR, TRUNC_MOD_EXPR),
 *   - every shift whose amount is not a constant within the operand's width,
 * by a call to the matching helper of the shim (simtwin/device_defined.h): an
 * always_inline function that computes what the device computes (saturating cvt, the
 * device's division by zero, clamped shifts) and reports through the runtime table when
 * C++ would have been undefined. The early inliner then puts the helper in place, so the
 * common case costs a compare and a branch.
 *
 * It also puts an alignment check (`__simtwin_dd_align`) before every load or store of a
 * scalar (integer, floating point, pointer; 2 to 16 bytes) through a pointer, and before
 * every atomic builtin: the device ends the launch with CUDA_ERROR_MISALIGNED_ADDRESS
 * where x86 would go on. The alignment asked for is what GCC assumes for the access
 * (the type's, less for a packed member; memcpy is byte-wise, aggregates are not
 * checked: nvcc splits them as it likes).
 *
 * Arguments: -fplugin-arg-simtwin_gcc_plugin-skip=DIR (repeatable) leaves statements of
 * files under DIR alone (the shim's own code, which computes device results itself).
 */
#include "gcc-plugin.h"
#include "plugin-version.h"
#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "cgraph.h"
#include "stringpool.h"
#include "stor-layout.h"
#include "diagnostic-core.h"
#include "gimplify.h"
#include "gimplify-me.h"
#include "builtins.h"
#include "fold-const.h"

#include <string.h>
#include <string>
#include <vector>
#include <map>

/* The plugin is licensed MIT OR Apache-2.0, both GPL-compatible. */
int plugin_is_GPL_compatible;

namespace {

std::vector<std::string> skip_dirs;
std::map<std::string, tree> helpers;
bool helpers_scanned = false;

bool starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* The shim's helpers (`__simtwin_dd_*`, marked `used` so they always exist), by name. */
tree helper(const std::string &name) {
    if (!helpers_scanned) {
        cgraph_node *node;
        FOR_EACH_FUNCTION(node) {
            tree d = node->decl;
            if (DECL_NAME(d) && starts_with(IDENTIFIER_POINTER(DECL_NAME(d)), "__simtwin_dd_"))
                helpers[IDENTIFIER_POINTER(DECL_NAME(d))] = d;
        }
        helpers_scanned = true;
    }
    auto it = helpers.find(name);
    if (it == helpers.end()) {
        error("simtwin plugin: the shim's helper %qs is missing (kernels-host and its include directory do not match)",
              name.c_str());
        return NULL_TREE;
    }
    return it->second;
}

bool skipped_location(location_t loc) {
    expanded_location x = expand_location(loc);
    if (!x.file) return false;
    for (const std::string &d : skip_dirs)
        if (strncmp(x.file, d.c_str(), d.size()) == 0) return true;
    return false;
}

/* `v` converted to `type` before `gsi` (itself if it has that type already). */
tree convert_before(gimple_stmt_iterator *gsi, tree v, tree type) {
    if (TYPE_MAIN_VARIANT(TREE_TYPE(v)) == TYPE_MAIN_VARIANT(type)) return v;
    if (TREE_CODE(v) == INTEGER_CST) return fold_convert(type, v);
    tree t = create_tmp_var(type, "simtwin_dd");
    gassign *a = gimple_build_assign(t, NOP_EXPR, v);
    gimple_set_location(a, gimple_location(gsi_stmt(*gsi)));
    gsi_insert_before(gsi, a, GSI_SAME_STMT);
    return t;
}

/* Replaces the assignment at `gsi` (lhs = op(args)) by lhs = fn(args, file, line). */
void replace_by_call(gimple_stmt_iterator *gsi, tree fn, std::vector<tree> args) {
    gimple *stmt = gsi_stmt(*gsi);
    location_t loc = gimple_location(stmt);
    tree lhs = gimple_assign_lhs(stmt);
    tree fntype = TREE_TYPE(fn);
    tree ret = TREE_TYPE(fntype);
    /* Arguments in the helper's parameter types. */
    tree parm = TYPE_ARG_TYPES(fntype);
    for (tree &a : args) {
        a = convert_before(gsi, a, TREE_VALUE(parm));
        parm = TREE_CHAIN(parm);
    }
    expanded_location x = expand_location(loc);
    const char *file = x.file ? x.file : "?";
    args.push_back(build_string_literal(strlen(file) + 1, file));
    args.push_back(build_int_cst(unsigned_type_node, x.line));
    vec<tree> v = vNULL;
    for (tree a : args) v.safe_push(a);
    gcall *call = gimple_build_call_vec(fn, v);
    v.release();
    gimple_set_location(call, loc);
    if (TYPE_MAIN_VARIANT(ret) == TYPE_MAIN_VARIANT(TREE_TYPE(lhs))) {
        gimple_call_set_lhs(call, lhs);
        gsi_replace(gsi, call, true);
    } else {
        /* The helper's result, then the assignment converts it: lhs = (T) result. */
        tree result = create_tmp_var(ret, "simtwin_dd");
        gimple_call_set_lhs(call, result);
        gsi_insert_before(gsi, call, GSI_SAME_STMT);
        gimple_assign_set_rhs_with_ops(gsi, NOP_EXPR, result);
    }
}

/* Before the statement at `gsi`: __simtwin_dd_align(addr, align, write, file, line). */
void insert_align_check(gimple_stmt_iterator *gsi, tree addr, unsigned HOST_WIDE_INT align, bool write) {
    tree fn = helper("__simtwin_dd_align");
    if (!fn) return;
    location_t loc = gimple_location(gsi_stmt(*gsi));
    tree parm = TYPE_ARG_TYPES(TREE_TYPE(fn));
    tree p = create_tmp_var(TREE_VALUE(parm), "simtwin_al");
    gassign *a = gimple_build_assign(p, NOP_EXPR, addr);
    gimple_set_location(a, loc);
    gsi_insert_before(gsi, a, GSI_SAME_STMT);
    expanded_location x = expand_location(loc);
    const char *file = x.file ? x.file : "?";
    gcall *call = gimple_build_call(fn, 5, p, build_int_cst(TREE_VALUE(TREE_CHAIN(parm)), align),
                                    build_int_cst(integer_type_node, write ? 1 : 0),
                                    build_string_literal(strlen(file) + 1, file), build_int_cst(unsigned_type_node, x.line));
    gimple_set_location(call, loc);
    gsi_insert_before(gsi, call, GSI_SAME_STMT);
}

/* A scalar load or store `ref` through a pointer: checked against the alignment GCC
   assumes for it (at least 2 bytes). */
void check_access(gimple_stmt_iterator *gsi, tree ref, bool write) {
    tree type = TREE_TYPE(ref);
    /* A store of a whole CUDA vector (float2, int4, double2: a struct as large as its
       alignment, 8 or 16 bytes) is one STG.64/.128 on the device, which needs the whole
       vector aligned (misaligned_store16_v4_at8 on the H200). Loads are left to their
       elements: ptxas narrows a vector load whose lanes are not all used. */
    bool vector_store = write && TREE_CODE(type) == RECORD_TYPE && TYPE_SIZE_UNIT(type) && tree_fits_uhwi_p(TYPE_SIZE_UNIT(type)) &&
                        (tree_to_uhwi(TYPE_SIZE_UNIT(type)) == 8 || tree_to_uhwi(TYPE_SIZE_UNIT(type)) == 16) &&
                        TYPE_ALIGN_UNIT(type) == tree_to_uhwi(TYPE_SIZE_UNIT(type));
    if (!(INTEGRAL_TYPE_P(type) || SCALAR_FLOAT_TYPE_P(type) || POINTER_TYPE_P(type) || vector_store)) return;
    if (!TYPE_SIZE_UNIT(type) || !tree_fits_uhwi_p(TYPE_SIZE_UNIT(type))) return;
    unsigned HOST_WIDE_INT size = tree_to_uhwi(TYPE_SIZE_UNIT(type));
    if (size < 2 || size > 16) return;
    tree base = get_base_address(ref);
    if (!base || TREE_CODE(base) != MEM_REF || TREE_CODE(TREE_OPERAND(base, 0)) == ADDR_EXPR) return;
    unsigned HOST_WIDE_INT align = get_object_alignment(ref) / BITS_PER_UNIT;
    if (align > size) align = size;
    if (align < 2) return;
    gimple_seq seq = NULL;
    tree addr = force_gimple_operand(build_fold_addr_expr(unshare_expr(ref)), &seq, true, NULL_TREE);
    if (seq) gsi_insert_seq_before(gsi, seq, GSI_SAME_STMT);
    insert_align_check(gsi, addr, align, write);
}

/* An atomic builtin (__atomic_*_N, __sync_*_N): its pointer must be aligned to N. */
void check_atomic(gimple_stmt_iterator *gsi, gcall *call) {
    tree fn = gimple_call_fndecl(call);
    if (!fn || !fndecl_built_in_p(fn, BUILT_IN_NORMAL) || gimple_call_num_args(call) < 1) return;
    const char *name = IDENTIFIER_POINTER(DECL_NAME(fn));
    if (!starts_with(name, "__atomic_") && !starts_with(name, "__sync_")) return;
    const char *us = strrchr(name, '_');
    unsigned long n = us ? strtoul(us + 1, NULL, 10) : 0;
    if (n != 2 && n != 4 && n != 8 && n != 16) return;
    tree ptr = gimple_call_arg(call, 0);
    if (!POINTER_TYPE_P(TREE_TYPE(ptr))) return;
    insert_align_check(gsi, ptr, n, true);
}

/* "s32", "u64", ... for an integer type of 8, 16, 32 or 64 bits; "" otherwise. */
std::string int_suffix(tree t, bool widen_to_32) {
    if (TREE_CODE(t) != INTEGER_TYPE && TREE_CODE(t) != ENUMERAL_TYPE) return "";
    unsigned p = TYPE_PRECISION(t);
    if (p != 8 && p != 16 && p != 32 && p != 64) return "";
    if (widen_to_32 && p < 32) p = 32;
    return std::string(TYPE_UNSIGNED(t) ? "u" : "s") + std::to_string(p);
}

const pass_data dd_pass_data = {
    GIMPLE_PASS, "simtwin_dd", OPTGROUP_NONE, TV_NONE, PROP_gimple_any | PROP_cfg, 0, 0, 0, 0,
};

struct dd_pass : gimple_opt_pass {
    dd_pass(gcc::context *ctx) : gimple_opt_pass(dd_pass_data, ctx) {}

    unsigned int execute(function *fun) override {
        tree fndecl = fun->decl;
        if (DECL_NAME(fndecl) && starts_with(IDENTIFIER_POINTER(DECL_NAME(fndecl)), "__simtwin")) return 0;
        basic_block bb;
        FOR_EACH_BB_FN(bb, fun) {
            for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
                gimple *stmt = gsi_stmt(gsi);
                /* Atomics are checked in the shim too: its atomicAdd & co. are where the
                   user's pointer reaches the builtin. */
                if (gcall *call = dyn_cast<gcall *>(stmt)) {
                    check_atomic(&gsi, call);
                    /* `*(int2 *)q = make_int2(...)`: the C++ front end returns the vector
                       straight into the destination (the call's lhs), so the store is the
                       call's, made inside the shim's make_int2. */
                    tree lhs = gimple_call_lhs(call);
                    if (lhs && !skipped_location(gimple_location(stmt))) check_access(&gsi, lhs, true);
                } else if (!skipped_location(gimple_location(stmt))) {
                    if (gimple_assign_single_p(stmt)) {
                        if (gimple_store_p(stmt)) check_access(&gsi, gimple_assign_lhs(stmt), true);
                        if (gimple_assign_load_p(stmt)) check_access(&gsi, gimple_assign_rhs1(stmt), false);
                    }
                }
                if (!is_gimple_assign(stmt)) continue;
                enum tree_code code = gimple_assign_rhs_code(stmt);
                if (code != FIX_TRUNC_EXPR && code != TRUNC_DIV_EXPR && code != TRUNC_MOD_EXPR &&
                    code != LSHIFT_EXPR && code != RSHIFT_EXPR)
                    continue;
                if (skipped_location(gimple_location(stmt))) continue;
                tree lhs = gimple_assign_lhs(stmt);
                tree lt = TREE_TYPE(lhs);
                tree a = gimple_assign_rhs1(stmt);
                if (code == FIX_TRUNC_EXPR) {
                    tree ft = TREE_TYPE(a);
                    if (TREE_CODE(ft) != REAL_TYPE) continue;
                    const char *src = TYPE_MODE(ft) == SFmode ? "f32" : TYPE_MODE(ft) == DFmode ? "f64" : nullptr;
                    std::string dst = int_suffix(lt, false);
                    if (!src || dst.empty()) continue;
                    tree fn = helper(std::string("__simtwin_dd_cvt_") + src + "_" + dst);
                    if (fn) replace_by_call(&gsi, fn, {a});
                    continue;
                }
                tree b = gimple_assign_rhs2(stmt);
                std::string ty = int_suffix(lt, true);
                if (ty.empty()) continue;
                if (code == TRUNC_DIV_EXPR || code == TRUNC_MOD_EXPR) {
                    /* Constant divisors other than 0 (and -1 for signed types) are defined. */
                    if (TREE_CODE(b) == INTEGER_CST && !integer_zerop(b) &&
                        !(integer_all_onesp(b) && !TYPE_UNSIGNED(lt)))
                        continue;
                    tree fn = helper(std::string(code == TRUNC_DIV_EXPR ? "__simtwin_dd_div_" : "__simtwin_dd_mod_") + ty);
                    if (fn) replace_by_call(&gsi, fn, {a, b});
                } else {
                    /* Constant amounts within the operand's width are defined. */
                    if (TREE_CODE(b) == INTEGER_CST && tree_int_cst_sgn(b) >= 0 &&
                        compare_tree_int(b, TYPE_PRECISION(lt)) < 0)
                        continue;
                    tree fn = helper(std::string(code == LSHIFT_EXPR ? "__simtwin_dd_shl_" : "__simtwin_dd_shr_") + ty);
                    if (fn) replace_by_call(&gsi, fn, {a, b});
                }
            }
        }
        return 0;
    }
};

} // namespace

int plugin_init(struct plugin_name_args *info, struct plugin_gcc_version *version) {
    if (!plugin_default_version_check(version, &gcc_version)) {
        error("simtwin plugin: built for GCC %s, loaded by another GCC (kernels-host rebuilds it per compiler)",
              gcc_version.basever);
        return 1;
    }
    for (int i = 0; i < info->argc; ++i)
        if (strcmp(info->argv[i].key, "skip") == 0 && info->argv[i].value) skip_dirs.push_back(info->argv[i].value);
    struct register_pass_info pass;
    pass.pass = new dd_pass(g);
    pass.reference_pass_name = "cfg";
    pass.ref_pass_instance_number = 1;
    pass.pos_op = PASS_POS_INSERT_AFTER;
    register_callback(info->base_name, PLUGIN_PASS_MANAGER_SETUP, NULL, &pass);
    return 0;
}
