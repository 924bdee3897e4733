/* jaxpr.c -- building, checking, printing, evaluating and simplifying Jaxprs. */
#include "jaxpr/jaxpr.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "core/config.h"
#include "core/dtype.h"
#include "core/error.h"
#include "trace/sharding.h"
#include "trace/trace.h"

/* ------------------------------------------------------------ building */

static bool grow(void **p, int *cap, int need, size_t item) {
  if (need <= *cap) return true;
  int cap2 = *cap ? *cap * 2 : 16;
  while (cap2 < need) cap2 *= 2;
  void *q = realloc(*p, (size_t)cap2 * item);
  if (!q) {
    error_set(JX_ERR_OOM, "out of memory building a jaxpr");
    return false;
  }
  *p = q;
  *cap = cap2;
  return true;
}

Jaxpr *jaxpr_new(void) {
  Jaxpr *j = calloc(1, sizeof *j);
  if (!j) error_set(JX_ERR_OOM, "out of memory building a jaxpr");
  else j->refcount = 1;
  return j;
}

Jaxpr *jaxpr_ref(Jaxpr *j) {
  if (j) __atomic_add_fetch(&j->refcount, 1, __ATOMIC_RELAXED); /* jit caches share jaxprs across threads */
  return j;
}

void jaxpr_params_retain(const PrimParams *pp) {
  jaxpr_ref(pp->jaxpr);
  for (int b = 0; b < pp->nbranches; b++) jaxpr_ref(pp->branches[b]);
  for (int f = 0; f < pp->nfns; f++) fn_retain(pp->fns[f]);
}

void jaxpr_params_release(PrimParams *pp) {
  jaxpr_free(pp->jaxpr);
  pp->jaxpr = NULL;
  for (int b = 0; b < pp->nbranches; b++) jaxpr_free(pp->branches[b]), pp->branches[b] = NULL;
  pp->nbranches = 0;
  for (int f = 0; f < pp->nfns; f++) fn_release(pp->fns[f]), pp->fns[f] = NULL;
  pp->nfns = 0;
}

static void eqn_clear(JaxprEqn *q) {
  free(q->in), free(q->out);
  q->in = q->out = NULL;
  jaxpr_params_release(&q->params);
}

void jaxpr_free(Jaxpr *j) {
  if (!j || __atomic_sub_fetch(&j->refcount, 1, __ATOMIC_ACQ_REL) > 0) return;
  if (j->compiled_free) j->compiled_free(j->compiled);
  for (int i = 0; i < j->nconst; i++) array_drop(j->consts[i]);
  for (int i = 0; i < j->neqns; i++) eqn_clear(&j->eqns[i]);
  free(j->vars), free(j->invars), free(j->constvars), free(j->consts), free(j->eqns);
  free(j->outvars), free(j->name);
  free(j);
}

uint64_t jaxpr_hash(const Jaxpr *j) { return prim_jaxpr_hash(j); }
bool jaxpr_equal(const Jaxpr *a, const Jaxpr *b) { return prim_jaxpr_equal(a, b); }

int jaxpr_add_var(Jaxpr *j, const Aval *aval) {
  if (!grow((void **)&j->vars, &j->vcap, j->nvars + 1, sizeof *j->vars)) return -1;
  j->vars[j->nvars] = *aval;
  return j->nvars++;
}

static bool push_int(int **list, int *n, int v) {
  int cap = *n; /* lists grow one at a time: they are short */
  int *q = realloc(*list, (size_t)(cap + 1) * sizeof *q);
  if (!q) {
    error_set(JX_ERR_OOM, "out of memory building a jaxpr");
    return false;
  }
  q[(*n)++] = v;
  *list = q;
  return true;
}

int jaxpr_add_const(Jaxpr *j, jx_array *value) {
  for (int i = 0; i < j->nconst; i++)
    if (j->consts[i] == value) return j->constvars[i];
  Aval av = prim_aval_of(value);
  int v = jaxpr_add_var(j, &av);
  if (v < 0) return -1;
  jx_array **c = realloc(j->consts, (size_t)(j->nconst + 1) * sizeof *c);
  if (!c) {
    error_set(JX_ERR_OOM, "out of memory building a jaxpr");
    return -1;
  }
  j->consts = c;
  c[j->nconst] = array_retain(value);
  int n = j->nconst;
  if (!push_int(&j->constvars, &n, v)) {
    array_drop(value);
    return -1;
  }
  j->nconst = n;
  return v;
}

bool jaxpr_add_invar(Jaxpr *j, int var) { return push_int(&j->invars, &j->nin, var); }
bool jaxpr_add_outvar(Jaxpr *j, int var) { return push_int(&j->outvars, &j->nout, var); }

bool jaxpr_add_eqn(Jaxpr *j, Prim p, const PrimParams *pp, int nin, const int *in, int nout,
                   const int *out) {
  if (!grow((void **)&j->eqns, &j->ecap, j->neqns + 1, sizeof *j->eqns)) return false;
  int *copy = malloc((size_t)(nin ? nin : 1) * sizeof *copy);
  int *ocopy = malloc((size_t)(nout ? nout : 1) * sizeof *ocopy);
  if (!copy || !ocopy) {
    free(copy), free(ocopy);
    error_set(JX_ERR_OOM, "out of memory building a jaxpr");
    return false;
  }
  if (nin) memcpy(copy, in, (size_t)nin * sizeof *copy);
  if (nout) memcpy(ocopy, out, (size_t)nout * sizeof *ocopy);
  j->eqns[j->neqns++] = (JaxprEqn){.prim = p, .params = *pp, .nin = nin, .in = copy,
                                   .nout = nout, .out = ocopy};
  jaxpr_params_retain(pp);
  return true;
}

/* ------------------------------------------------------------ checking */

static bool aval_equal(const Aval *a, const Aval *b) {
  return a->dtype == b->dtype && a->weak == b->weak && a->ndim == b->ndim &&
         memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

jx_status jaxpr_check(const Jaxpr *j) {
  bool *defined = calloc((size_t)(j->nvars ? j->nvars : 1), 1);
  Aval *in = NULL, *out = NULL;
  int cap = 0;
  jx_status s = JX_OK;
  if (!defined) return JX_ERR_OOM;
#define BAD(...)                                   \
  do {                                             \
    error_set(JX_ERR_INTERNAL, "jaxpr_check: " __VA_ARGS__); \
    s = JX_ERR_INTERNAL;                           \
    goto done;                                     \
  } while (0)
  for (int i = 0; i < j->nconst; i++) defined[j->constvars[i]] = true;
  for (int i = 0; i < j->nin; i++) {
    if (defined[j->invars[i]]) BAD("input %d redefines a variable", i);
    defined[j->invars[i]] = true;
  }
  for (int e = 0; e < j->neqns; e++) {
    const JaxprEqn *q = &j->eqns[e];
    int need = q->nin > q->nout ? q->nin : q->nout;
    if (need > cap) {
      cap = need;
      free(in), free(out);
      in = malloc((size_t)cap * sizeof *in), out = malloc((size_t)cap * sizeof *out);
      if (!in || !out) {
        error_set(JX_ERR_OOM, "jaxpr_check: out of memory");
        s = JX_ERR_OOM;
        goto done;
      }
    }
    for (int i = 0; i < q->nin; i++) {
      if (q->in[i] < 0 || q->in[i] >= j->nvars || !defined[q->in[i]])
        BAD("equation %d (%s) uses an undefined variable", e, prim_name(q->prim));
      in[i] = j->vars[q->in[i]];
    }
    if (q->nout != prim_nout(q->prim, q->nin, &q->params))
      BAD("equation %d (%s) has %d outputs, the primitive gives %d", e, prim_name(q->prim), q->nout,
          prim_nout(q->prim, q->nin, &q->params));
    for (int o = 0; o < q->nout; o++) {
      if (q->out[o] < 0 || q->out[o] >= j->nvars || defined[q->out[o]])
        BAD("equation %d (%s) redefines its output %d", e, prim_name(q->prim), o);
      defined[q->out[o]] = true;
    }
    if (q->params.jaxpr && (s = jaxpr_check(q->params.jaxpr)) != JX_OK) goto done;
    for (int b = 0; b < q->params.nbranches; b++)
      if ((s = jaxpr_check(q->params.branches[b])) != JX_OK) goto done;
    if (!prim_abstract_eval(q->prim, q->nin, in, &q->params, out)) {
      s = JX_ERR_INTERNAL;
      goto done;
    }
    for (int o = 0; o < q->nout; o++)
      if (!aval_equal(&out[o], &j->vars[q->out[o]]))
        BAD("equation %d (%s) has an output type that differs from its abstract evaluation", e,
            prim_name(q->prim));
  }
  for (int i = 0; i < j->nout; i++)
    if (j->outvars[i] < 0 || j->outvars[i] >= j->nvars || !defined[j->outvars[i]])
      BAD("output %d is undefined", i);
#undef BAD
done:
  free(defined), free(in), free(out);
  return s;
}

/* ------------------------------------------------------------ printing */

typedef struct Text {
  char *s;
  size_t n, cap;
} Text;

static void put(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(Text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (len < 0 || !t->s) return;
  if (t->n + (size_t)len + 1 > t->cap) {
    size_t cap = (t->cap + (size_t)len + 1) * 2;
    char *s = realloc(t->s, cap);
    if (!s) {
      free(t->s);
      t->s = NULL;
      return;
    }
    t->s = s;
    t->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(t->s + t->n, (size_t)len + 1, fmt, ap);
  va_end(ap);
  t->n += (size_t)len;
}

/* The name of an equation output that nothing reads (JAX's DropVar: "_"). */
#define DROP_NAME (-2)

/* JAX's variable names: a..z, then ba, bb, ...; DROP_NAME is "_". */
static void var_name(char *buf, int k) {
  if (k == DROP_NAME) {
    strcpy(buf, "_");
    return;
  }
  char tmp[16];
  int n = 0;
  do {
    tmp[n++] = (char)('a' + k % 26);
    k = k / 26;
  } while (k > 0);
  for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
  buf[n] = '\0';
}

static void put_aval(Text *t, const Aval *a) {
  put(t, "%s[", dtype_short_name(a->dtype));
  for (int d = 0; d < a->ndim; d++) put(t, d ? ",%lld" : "%lld", (long long)a->shape[d]);
  put(t, "]");
}

static void put_ints(Text *t, int n, const int *v) {
  put(t, "(");
  for (int i = 0; i < n; i++) put(t, i ? ", %d" : "%d", v[i]);
  put(t, n == 1 ? ",)" : ")");
}

static void put_i64s(Text *t, int n, const int64_t *v) {
  put(t, "(");
  for (int i = 0; i < n; i++) put(t, i ? ", %lld" : "%lld", (long long)v[i]);
  put(t, n == 1 ? ",)" : ")");
}

static void put_list(Text *t, int n, const int *v) {
  put(t, "[");
  for (int i = 0; i < n; i++) put(t, i ? ", %d" : "%d", v[i]);
  put(t, "]");
}

/* Params, JAX-style, sorted by name as JAX prints them: one printer per primitive with
 * params (x: the first operand's aval, for ranks; may be NULL). Primitives without
 * params (elementwise ops, threefry2x32, stop_gradient) have no entry; jit prints its
 * sub-jaxpr in jaxpr_print. */
typedef void (*PrintRule)(Text *t, const PrimParams *p, const Aval *x);

static void print_convert(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[new_dtype=%s weak_type=%s]", jx_dtype_name(p->dtype), p->weak ? "True" : "False");
}
static void print_bitcast(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[new_dtype=%s]", jx_dtype_name(p->dtype));
}
static void print_sort(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[dimension=%d is_stable=True num_keys=1]", p->axis);
}
static void print_scatter_add(Text *t, const PrimParams *p, const Aval *x) { put(t, "[axis=%d]", p->axis); }
static const char *py_bool(bool b) { return b ? "True" : "False"; }
static void print_triangular_solve(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[conjugate_a=%s left_side=%s lower=%s transpose_a=%s unit_diagonal=%s]",
      py_bool(p->flags & LINALG_CONJUGATE_A), py_bool(p->flags & LINALG_LEFT_SIDE), py_bool(p->flags & LINALG_LOWER),
      py_bool(p->flags & LINALG_TRANSPOSE_A), py_bool(p->flags & LINALG_UNIT_DIAGONAL));
}
static void print_qr(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[full_matrices=%s]", py_bool(p->flags & LINALG_FULL_MATRICES));
}
static void print_eigh(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[lower=%s sort_eigenvalues=%s]", py_bool(p->flags & LINALG_LOWER),
      py_bool(!(p->flags & LINALG_UNSORTED)));
}
static void print_svd(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[compute_uv=%s full_matrices=%s]", py_bool(p->flags & LINALG_COMPUTE_UV),
      py_bool(p->flags & LINALG_FULL_MATRICES));
}
static void print_eig(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[compute_left_eigenvectors=%s compute_right_eigenvectors=%s enable_eigvec_derivs=False "
         "implementation=None]", py_bool(p->flags & LINALG_COMPUTE_LEFT), py_bool(p->flags & LINALG_COMPUTE_RIGHT));
}
static void print_tridiagonal_solve(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[perturb_singular=False]");
}
static void print_fft(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[fft_lengths=");
  put_i64s(t, p->ndim, p->shape);
  put(t, " fft_type=%u]", p->flags); /* JAX prints the FftType as its number */
}
static void print_reduce(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[axes=");
  put_ints(t, p->naxes, p->axes);
  put(t, "]");
}
static void print_concatenate(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[dimension=%d]", p->axis);
}
static void print_gather(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[axis=%d mode=clip]", p->axis);
}
static void print_iota(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[dimension=%d dtype=%s shape=", p->axis, jx_dtype_name(p->dtype));
  put_i64s(t, p->ndim, p->shape);
  put(t, "]");
}
static void print_dot(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[dimension_numbers=((");
  put_list(t, p->ncontract, p->lhs_contract);
  put(t, ", ");
  put_list(t, p->ncontract, p->rhs_contract);
  put(t, "), (");
  put_list(t, p->nbatch, p->lhs_batch);
  put(t, ", ");
  put_list(t, p->nbatch, p->rhs_batch);
  put(t, "))]");
}
static void print_reshape(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[dimensions=None new_sizes=");
  put_i64s(t, p->ndim, p->shape);
  put(t, "]");
}
static void print_transpose(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[permutation=");
  put_ints(t, p->naxes, p->axes);
  put(t, "]");
}
static void print_broadcast_in_dim(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[broadcast_dimensions=");
  put_ints(t, p->naxes, p->axes);
  put(t, " shape=");
  put_i64s(t, p->ndim, p->shape);
  put(t, "]");
}
static void print_pad(Text *t, const PrimParams *p, const Aval *x) {
  int nd = x ? x->ndim : 0;
  put(t, "[padding_config=(");
  for (int d = 0; d < nd; d++)
    put(t, "%s(%lld, %lld, 0)", d ? ", " : "", (long long)p->start[d], (long long)p->stop[d]);
  put(t, nd == 1 ? ",) padding_value=%g]" : ") padding_value=%g]", p->value);
}
static void print_slice(Text *t, const PrimParams *p, const Aval *x) {
  int nd = x ? x->ndim : 0;
  put(t, "[limit_indices=");
  put_i64s(t, nd, p->stop);
  put(t, " start_indices=");
  put_i64s(t, nd, p->start);
  put(t, " strides=");
  put_i64s(t, nd, p->step);
  put(t, "]");
}
static void print_debug_print(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[fmt=%s ordered=True]", p->text ? p->text : "");
}
static void print_collective(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[axes=('%s',)", p->text ? p->text : "");
  if (p->axis || p->tiled) put(t, " axis=%d tiled=%s", p->axis, p->tiled ? "True" : "False");
  put(t, "]");
}
static void print_rev(Text *t, const PrimParams *p, const Aval *x) {
  put(t, "[dimensions=");
  put_ints(t, p->naxes, p->axes);
  put(t, "]");
}

static const PrintRule print_rules[PRIM_NUM] = {
    [PRIM_convert_element_type] = print_convert,
    [PRIM_bitcast_convert_type] = print_bitcast,
    [PRIM_reduce_sum] = print_reduce,
    [PRIM_reduce_prod] = print_reduce,
    [PRIM_reduce_max] = print_reduce,
    [PRIM_reduce_min] = print_reduce,
    [PRIM_reduce_and] = print_reduce,
    [PRIM_reduce_or] = print_reduce,
    [PRIM_reshape] = print_reshape,
    [PRIM_transpose] = print_transpose,
    [PRIM_broadcast_in_dim] = print_broadcast_in_dim,
    [PRIM_pad] = print_pad,
    [PRIM_slice] = print_slice,
    [PRIM_rev] = print_rev,
    [PRIM_concatenate] = print_concatenate,
    [PRIM_gather] = print_gather,
    [PRIM_dot_general] = print_dot,
    [PRIM_iota] = print_iota,
    [PRIM_sort] = print_sort,
    [PRIM_scatter_add] = print_scatter_add,
    [PRIM_triangular_solve] = print_triangular_solve,
    [PRIM_qr] = print_qr,
    [PRIM_eigh] = print_eigh,
    [PRIM_svd] = print_svd,
    [PRIM_eig] = print_eig,
    [PRIM_debug_print] = print_debug_print,
    [PRIM_tridiagonal_solve] = print_tridiagonal_solve,
    [PRIM_fft] = print_fft,
    [PRIM_psum] = print_collective,   [PRIM_pmax] = print_collective,
    [PRIM_pmin] = print_collective,   [PRIM_all_gather] = print_collective,
    [PRIM_psum_scatter] = print_collective, [PRIM_ppermute] = print_collective,
    [PRIM_all_to_all] = print_collective, [PRIM_axis_index] = print_collective,
};

static void put_params(Text *t, const JaxprEqn *q, const Aval *in0) {
  if (print_rules[q->prim]) print_rules[q->prim](t, &q->params, in0);
}

/* A 0-d constant prints inline as a literal ("2.0:f32[]"); NULL otherwise. */
static bool put_literal(Text *t, const Jaxpr *j, int var) {
  for (int i = 0; i < j->nconst; i++) {
    if (j->constvars[i] != var) continue;
    jx_array *c = j->consts[i];
    if (c->ndim != 0 || c->tracer || dtype_is_complex(c->dtype)) return false;
    if (c->dtype == JX_FLOAT0) { /* no value: JAX prints NumPy's repr of a V0 record */
      put(t, "(b'',):float0[]");
      return true;
    }
    double v = jx_item(c);
    if (dtype_is_floating(c->dtype)) {
      char buf[32];
      snprintf(buf, sizeof buf, "%.8g", v);
      if (!strpbrk(buf, ".eni")) strcat(buf, ".0");
      put(t, "%s:%s[]", buf, dtype_short_name(c->dtype));
    } else if (dtype_is_bool(c->dtype)) {
      put(t, "%s:bool[]", v != 0 ? "True" : "False");
    } else {
      put(t, "%lld:%s[]", (long long)v, dtype_short_name(c->dtype));
    }
    return true;
  }
  return false;
}

/* Names are shared by nested jaxprs as JAX 0.10 prints them: a sub-jaxpr's inputs and
 * outputs take the names of the equation's operands and results, its other variables
 * the next fresh names. */
static void put_jaxpr(Text *t, const Jaxpr *j, int *next, const int *in_names, const int *out_names,
                      int indent);

static void put_call_params(Text *t, const JaxprEqn *q, const int *name, const bool *literal,
                            int *next, int indent) {
  const Jaxpr *sub = q->params.jaxpr;
  int *in_names = malloc((size_t)(sub->nin + 1) * sizeof *in_names);
  int *out_names = malloc((size_t)(sub->nout + 1) * sizeof *out_names);
  if (!in_names || !out_names) {
    free(in_names), free(out_names);
    free(t->s), t->s = NULL;
    return;
  }
  for (int i = 0; i < sub->nin; i++) in_names[i] = literal[q->in[i]] ? -1 : name[q->in[i]];
  for (int o = 0; o < sub->nout; o++) out_names[o] = name[q->out[o]];
  put(t, "[\n%*sname=%s\n%*sjaxpr=", indent + 2, "", sub->name ? sub->name : "<lambda>", indent + 2, "");
  put_jaxpr(t, sub, next, in_names, out_names, indent + 2);
  put(t, "\n%*s]", indent, "");
  free(in_names), free(out_names);
}

/* cond's branches as JAX 0.10 prints them: fresh names, one jaxpr per line. */
static void put_branches(Text *t, const JaxprEqn *q, int *next, int indent) {
  put(t, "[\n%*sbranches=(\n", indent + 2, "");
  for (int b = 0; b < q->params.nbranches && t->s; b++) {
    put(t, "%*s", indent + 4, "");
    put_jaxpr(t, q->params.branches[b], next, NULL, NULL, indent + 4);
    put(t, "\n");
  }
  put(t, "%*s)\n%*s]", indent + 2, "", indent, "");
}

/* shard_map as JAX 0.10 prints it (params sorted by name; the mesh without axis_types). */
static void put_shard_specs(Text *t, const char *name, int n, jx_sharding *const *sh, int indent) {
  put(t, "%*s%s=(", indent + 2, "", name);
  for (int i = 0; i < n; i++) put(t, "%s%s", i ? ", " : "", sh[i]->text);
  put(t, n == 1 ? ",)\n" : ")\n");
}

static void put_shard_map_params(Text *t, const JaxprEqn *q, int *next, int indent) {
  const ShardSpec *sp = q->params.shard;
  put(t, "[\n%*scheck_vma=False\n", indent + 2, "");
  put_shard_specs(t, "in_specs", sp->nin, sp->in, indent);
  put(t, "%*sjaxpr=", indent + 2, "");
  put_jaxpr(t, q->params.jaxpr, next, NULL, NULL, indent + 2);
  put(t, "\n%*smesh=Mesh(", indent + 2, "");
  for (int a = 0; a < sp->mesh->ndim; a++)
    put(t, "%s'%s': %lld", a ? ", " : "", sp->mesh->names[a], (long long)sp->mesh->shape[a]);
  put(t, ")\n");
  put_shard_specs(t, "out_specs", sp->nout, sp->out, indent);
  put(t, "%*s]", indent, "");
}

/* custom_jvp_call, custom_vjp_call, custom_lin and checkpoint as JAX 0.10 prints them
 * (params sorted by name, the sub-jaxpr with fresh names; rules by their names;
 * checkpoint is JAX's remat2 under jaxc's name). */
static void put_custom_params(Text *t, const JaxprEqn *q, int *next, int indent) {
  const PrimParams *p = &q->params;
  const char *name = p->jaxpr->name ? p->jaxpr->name : "<lambda>";
  static const char *const policy[] = {"None", "everything_saveable",
                                       "DotsSaveable(only_if_no_batch_dims=False)",
                                       "DotsSaveable(only_if_no_batch_dims=True)"};
  put(t, "[\n");
  if (q->prim == PRIM_custom_lin) {
    put(t, "%*sbwd=%s\n%*snum_res=%d\n%*ssymbolic_zeros=False\n%*s]", indent + 2, "", jx_fn_name(p->fns[0]),
        indent + 2, "", p->nres, indent + 2, "", indent, "");
    return;
  }
  if (q->prim == PRIM_checkpoint) put(t, "%*sdifferentiated=False\n", indent + 2, "");
  else put(t, "%*sname=%s\n", indent + 2, "", name);
  if (q->prim == PRIM_custom_vjp_call) put(t, "%*sbwd=%s\n", indent + 2, "", jx_fn_name(p->fns[1]));
  put(t, "%*s%s=", indent + 2, "", q->prim == PRIM_checkpoint ? "jaxpr" : "call_jaxpr");
  put_jaxpr(t, p->jaxpr, next, NULL, NULL, indent + 2);
  put(t, "\n");
  if (q->prim == PRIM_custom_vjp_call) put(t, "%*sfwd=%s\n", indent + 2, "", jx_fn_name(p->fns[0]));
  if (q->prim == PRIM_custom_jvp_call) put(t, "%*sjvp=%s\n", indent + 2, "", jx_fn_name(p->fns[0]));
  if (q->prim == PRIM_checkpoint)
    put(t, "%*spolicy=%s\n%*sprevent_cse=True\n", indent + 2, "", p->flags < 4 ? policy[p->flags] : "?",
        indent + 2, "");
  else put(t, "%*ssymbolic_zeros=False\n", indent + 2, "");
  put(t, "%*s]", indent, "");
}

/* while and scan params as JAX 0.10 prints them (sorted by name; sub-jaxprs with
 * fresh names). A bounded while adds max_trips (jaxc's, not JAX's). */
static void put_loop_params(Text *t, const JaxprEqn *q, int *next, int indent) {
  const PrimParams *p = &q->params;
  put(t, "[\n");
  if (q->prim == PRIM_while) {
    put(t, "%*sbody_jaxpr=", indent + 2, "");
    put_jaxpr(t, p->branches[1], next, NULL, NULL, indent + 2);
    put(t, "\n%*sbody_nconsts=%d\n%*scond_jaxpr=", indent + 2, "", p->nconsts[1], indent + 2, "");
    put_jaxpr(t, p->branches[0], next, NULL, NULL, indent + 2);
    put(t, "\n%*scond_nconsts=%d\n", indent + 2, "", p->nconsts[0]);
    if (p->length > 0) put(t, "%*smax_trips=%lld\n", indent + 2, "", (long long)p->length);
  } else {
    put(t, "%*sjaxpr=", indent + 2, "");
    put_jaxpr(t, p->branches[0], next, NULL, NULL, indent + 2);
    put(t, "\n%*slength=%lld\n%*snum_carry=%d\n%*snum_consts=%d\n%*sreverse=%s\n%*sunroll=%d\n",
        indent + 2, "", (long long)p->length, indent + 2, "", p->nconsts[1], indent + 2, "",
        p->nconsts[0], indent + 2, "", py_bool(p->reverse), indent + 2, "", p->unroll);
  }
  put(t, "%*s]", indent, "");
}

static void put_jaxpr_lines(Text *t, const Jaxpr *j, int *next, const int *in_names, const int *out_names,
                            int indent, bool force_lines);

/* A nested jaxpr with one equation prints on one line when it fits in 80 columns, as
 * JAX's pretty printer does; otherwise (and with more equations) one per line. */
static void put_jaxpr(Text *t, const Jaxpr *j, int *next, const int *in_names, const int *out_names,
                      int indent) {
  size_t start = t->s ? t->n : 0;
  int next0 = *next;
  put_jaxpr_lines(t, j, next, in_names, out_names, indent, false);
  if (!t->s || indent == 0 || memchr(t->s + start, '\n', t->n - start)) return;
  size_t col = 0;
  while (col < start && t->s[start - 1 - col] != '\n') col++;
  if (col + (t->n - start) <= 80) return;
  t->n = start, t->s[start] = '\0', *next = next0;
  put_jaxpr_lines(t, j, next, in_names, out_names, indent, true);
}

static void put_jaxpr_lines(Text *t, const Jaxpr *j, int *next, const int *in_names, const int *out_names,
                            int indent, bool force_lines) {
  /* Names in order of definition: non-literal constvars, invars, equation outputs. */
  int *name = malloc((size_t)(j->nvars ? j->nvars : 1) * sizeof *name);
  bool *literal = calloc((size_t)(j->nvars ? j->nvars : 1), 1);
  bool *named = calloc((size_t)(j->nvars ? j->nvars : 1), 1);
  Text scratch = {.s = malloc(64), .cap = 64};
  if (!name || !literal || !named || !scratch.s) {
    free(name), free(literal), free(named), free(scratch.s);
    free(t->s), t->s = NULL;
    return;
  }
  for (int i = 0; i < j->nconst; i++) {
    scratch.n = 0;
    if (put_literal(&scratch, j, j->constvars[i])) literal[j->constvars[i]] = true;
    else name[j->constvars[i]] = (*next)++, named[j->constvars[i]] = true;
  }
  for (int i = 0; i < j->nin; i++) {
    int v = j->invars[i];
    name[v] = in_names && in_names[i] >= 0 ? in_names[i] : (*next)++;
    named[v] = true;
  }
  /* outputs computed by an equation take the caller's names for them */
  for (int o = 0; out_names && o < j->nout; o++) {
    int v = j->outvars[o];
    if (!named[v] && !literal[v]) name[v] = out_names[o], named[v] = true;
  }
  /* At the top level an equation output that nothing reads prints as "_" and takes no
   * name, as JAX's pp_toplevel_jaxpr (core._dropvars: the outer jaxpr only; nested
   * jaxprs keep their names, and a jit's sub-jaxpr shares the outer names, "_" too). */
  if (indent == 0 && !in_names && !out_names) {
    bool *used = calloc((size_t)(j->nvars ? j->nvars : 1), 1);
    if (used) {
      for (int o = 0; o < j->nout; o++) used[j->outvars[o]] = true;
      for (int e = 0; e < j->neqns; e++)
        for (int i = 0; i < j->eqns[e].nin; i++) used[j->eqns[e].in[i]] = true;
      for (int e = 0; e < j->neqns; e++)
        for (int o = 0; o < j->eqns[e].nout; o++) {
          int v = j->eqns[e].out[o];
          if (!used[v] && !named[v] && !literal[v]) name[v] = DROP_NAME, named[v] = true;
        }
      free(used);
    }
  }
  char nm[16];
#define PUT_VAR(v)                             \
  do {                                         \
    if (literal[v]) put_literal(t, j, v);      \
    else {                                     \
      var_name(nm, name[v]);                   \
      put(t, "%s", nm);                        \
    }                                          \
  } while (0)
  put(t, "{ lambda ");
  bool first = true;
  for (int i = 0; i < j->nconst; i++) {
    int v = j->constvars[i];
    if (literal[v]) continue;
    var_name(nm, name[v]);
    put(t, "%s%s:", first ? "" : " ", nm);
    put_aval(t, &j->vars[v]);
    first = false;
  }
  put(t, "; ");
  for (int i = 0; i < j->nin; i++) {
    var_name(nm, name[j->invars[i]]);
    put(t, "%s%s:", i ? " " : "", nm);
    put_aval(t, &j->vars[j->invars[i]]);
  }
  put(t, ". let");
  bool multiline = j->neqns > 1 || (force_lines && j->neqns > 0);
  for (int e = 0; e < j->neqns; e++) multiline |= j->eqns[e].params.jaxpr || j->eqns[e].params.nbranches;
  for (int e = 0; e < j->neqns && t->s; e++) {
    const JaxprEqn *q = &j->eqns[e];
    if (multiline) put(t, "\n%*s", indent + 4, "");
    else put(t, " ");
    for (int o = 0; o < q->nout; o++) {
      int v = q->out[o];
      if (!named[v]) name[v] = (*next)++, named[v] = true;
      var_name(nm, name[v]);
      put(t, "%s%s:", o ? " " : "", nm);
      put_aval(t, &j->vars[v]);
    }
    put(t, q->nout ? " = %s" : "%s", prim_name(q->prim));
    if (q->prim == PRIM_shard_map) put_shard_map_params(t, q, next, indent + 4);
    else if (q->params.jaxpr && q->prim != PRIM_jit) put_custom_params(t, q, next, indent + 4);
    else if (q->params.jaxpr) put_call_params(t, q, name, literal, next, indent + 4);
    else if (q->prim == PRIM_while || q->prim == PRIM_scan) put_loop_params(t, q, next, indent + 4);
    else if (q->params.nbranches) put_branches(t, q, next, indent + 4);
    else put_params(t, q, q->nin ? &j->vars[q->in[0]] : NULL);
    for (int i = 0; i < q->nin; i++) {
      put(t, " ");
      PUT_VAR(q->in[i]);
    }
  }
  if (multiline) put(t, "\n%*sin (", indent + 2, "");
  else put(t, " in (");
  for (int i = 0; i < j->nout; i++) {
    if (i) put(t, ", ");
    PUT_VAR(j->outvars[i]);
  }
  put(t, j->nout == 1 ? ",) }" : ") }");
#undef PUT_VAR
  free(name), free(literal), free(named), free(scratch.s);
}

char *jaxpr_print(const Jaxpr *j) {
  Text t = {.s = malloc(256), .cap = 256};
  if (t.s) {
    t.s[0] = '\0';
    int next = 0;
    put_jaxpr(&t, j, &next, NULL, NULL, 0);
  }
  if (!t.s) error_set(JX_ERR_OOM, "jaxpr_print: out of memory");
  return t.s;
}

/* ----------------------------------------------------------- evaluation */

jx_status jaxpr_eval(const Jaxpr *j, jx_array *const *in, jx_array **out) {
  return prim_eval_jaxpr(j, in, out);
}

/* ---------------------------------------------------------------- DCE */

void jaxpr_dce(Jaxpr *j) {
  bool *live = calloc((size_t)(j->nvars ? j->nvars : 1), 1);
  if (!live) return; /* DCE is an optimization: skipping it is safe */
  for (int i = 0; i < j->nout; i++) live[j->outvars[i]] = true;
  int kept = 0;
  for (int e = j->neqns - 1; e >= 0; e--) {
    JaxprEqn *q = &j->eqns[e];
    bool used = prim_kind(q->prim) == PRIM_KIND_EFFECT; /* debug_print: kept, in order */
    for (int o = 0; o < q->nout; o++) used |= live[q->out[o]];
    if (!used) {
      eqn_clear(q);
      q->nin = -1; /* marked dead */
      continue;
    }
    for (int i = 0; i < q->nin; i++) live[q->in[i]] = true;
  }
  for (int e = 0; e < j->neqns; e++)
    if (j->eqns[e].nin >= 0) j->eqns[kept++] = j->eqns[e];
  j->neqns = kept;
  int nc = 0;
  for (int i = 0; i < j->nconst; i++) {
    if (live[j->constvars[i]]) {
      j->constvars[nc] = j->constvars[i];
      j->consts[nc++] = j->consts[i];
    } else {
      array_drop(j->consts[i]);
    }
  }
  j->nconst = nc;
  free(live);
}

/* ---------------------------------------------------------------- CSE */

static uint64_t eqn_hash(const JaxprEqn *q, const int *rename) {
  uint64_t h = (1469598103934665603ull ^ (uint64_t)q->prim) * 1099511628211ull;
  h = (h ^ prim_params_hash(q->prim, &q->params)) * 1099511628211ull;
  for (int i = 0; i < q->nin; i++) h = (h ^ (uint64_t)rename[q->in[i]]) * 1099511628211ull;
  return h;
}

static bool eqn_same(const JaxprEqn *a, const JaxprEqn *b, const int *rename) {
  if (a->prim != b->prim || a->nin != b->nin || a->nout != b->nout) return false;
  for (int i = 0; i < a->nin; i++)
    if (rename[a->in[i]] != rename[b->in[i]]) return false;
  return prim_params_equal(a->prim, &a->params, &b->params);
}

void jaxpr_cse(Jaxpr *j) {
  int *rename = malloc((size_t)(j->nvars ? j->nvars : 1) * sizeof *rename);
  uint64_t *hash = malloc((size_t)(j->neqns ? j->neqns : 1) * sizeof *hash);
  if (!rename || !hash) { /* an optimization: skipping it is safe */
    free(rename), free(hash);
    return;
  }
  for (int v = 0; v < j->nvars; v++) rename[v] = v;
  for (int e = 0; e < j->neqns; e++) {
    JaxprEqn *q = &j->eqns[e];
    for (int i = 0; i < q->nin; i++) q->in[i] = rename[q->in[i]];
    hash[e] = eqn_hash(q, rename);
    for (int f = 0; f < e; f++)
      if (hash[f] == hash[e] && eqn_same(&j->eqns[f], q, rename)) {
        for (int o = 0; o < q->nout; o++) rename[q->out[o]] = rename[j->eqns[f].out[o]];
        break;
      }
  }
  for (int o = 0; o < j->nout; o++) j->outvars[o] = rename[j->outvars[o]];
  free(rename), free(hash);
}

/* ------------------------------------------------------------- inlining */

/* Appends the equations of call's sub-jaxpr to out[], renamed into j's variables: its
 * inputs are the call's operands, its outputs the call's results, its constants join
 * j's. A result not computed by an equation of its own (an input passed through, an
 * output repeated) gets an identity (convert_element_type to its own dtype: a view). */
static bool inline_one(Jaxpr *j, JaxprEqn *call, JaxprEqn *out, int *nout_eqns) {
  const Jaxpr *sub = call->params.jaxpr;
  int *map = malloc((size_t)(sub->nvars ? sub->nvars : 1) * sizeof *map);
  bool ok = map != NULL;
  for (int v = 0; ok && v < sub->nvars; v++) map[v] = -1;
  for (int i = 0; ok && i < sub->nin; i++) map[sub->invars[i]] = call->in[i];
  for (int c = 0; ok && c < sub->nconst; c++) ok = (map[sub->constvars[c]] = jaxpr_add_const(j, sub->consts[c])) >= 0;
  /* the equation defining an outvar writes the call's result variable */
  for (int e = 0; ok && e < sub->neqns; e++) {
    const JaxprEqn *q = &sub->eqns[e];
    int *in = malloc((size_t)(q->nin + 1) * sizeof *in), *res = malloc((size_t)(q->nout + 1) * sizeof *res);
    ok = in && res;
    for (int i = 0; ok && i < q->nin; i++) in[i] = map[q->in[i]];
    for (int o = 0; ok && o < q->nout; o++) {
      int v = q->out[o], r = -1;
      for (int k = 0; k < sub->nout && r < 0; k++)
        if (sub->outvars[k] == v) r = call->out[k];
      if (r < 0) r = jaxpr_add_var(j, &sub->vars[v]);
      ok = (map[v] = res[o] = r) >= 0;
    }
    if (ok) {
      JaxprEqn nq = {.prim = q->prim, .params = q->params, .nin = q->nin, .in = in, .nout = q->nout, .out = res};
      jaxpr_params_retain(&nq.params);
      out[(*nout_eqns)++] = nq;
    } else {
      free(in), free(res);
    }
  }
  /* a result defined outside the sub-jaxpr's equations (an input or constant passed
   * through, or an output repeated): an identity equation gives the call's variable */
  for (int k = 0; ok && k < sub->nout; k++) {
    int v = sub->outvars[k];
    bool computed = false;
    for (int e = 0; e < sub->neqns && !computed; e++)
      for (int o = 0; o < sub->eqns[e].nout; o++) computed |= sub->eqns[e].out[o] == v;
    bool first = true;
    for (int m = 0; m < k; m++) first &= sub->outvars[m] != v;
    if (computed && first) continue;
    int *in = malloc(sizeof *in), *res = malloc(sizeof *res);
    ok = in && res;
    if (ok) {
      in[0] = map[v], res[0] = call->out[k];
      Aval a = sub->vars[v];
      PrimParams pp = {.dtype = a.dtype, .weak = a.weak};
      out[(*nout_eqns)++] = (JaxprEqn){.prim = PRIM_convert_element_type, .params = pp, .nin = 1,
                                       .in = in, .nout = 1, .out = res};
    } else {
      free(in), free(res);
    }
  }
  free(map);
  if (!ok) error_set(JX_ERR_OOM, "jaxpr: out of memory inlining %s", sub->name ? sub->name : "a call");
  return ok;
}

/* Calls that lowering inlines: jit, and the primal programs of custom_jvp_call,
 * custom_vjp_call and checkpoint, and special_call (their rules matter only to
 * transformations, which have run by then; custom_lin is never inlined). */
static bool inlinable(Prim p) {
  return p == PRIM_jit || p == PRIM_custom_jvp_call || p == PRIM_custom_vjp_call || p == PRIM_checkpoint ||
         p == PRIM_special_call;
}

bool jaxpr_has_calls(const Jaxpr *j) {
  for (int e = 0; e < j->neqns; e++)
    if (inlinable(j->eqns[e].prim)) return true;
  return false;
}

/* Number of equations j has after inlining every call, recursively. */
static int inlined_count(const Jaxpr *j) {
  int n = 0;
  for (int e = 0; e < j->neqns; e++)
    n += inlinable(j->eqns[e].prim) ? inlined_count(j->eqns[e].params.jaxpr) + j->eqns[e].params.jaxpr->nout : 1;
  return n;
}

bool jaxpr_inline_calls(Jaxpr *j) {
  bool any = false;
  for (int e = 0; e < j->neqns; e++) any |= inlinable(j->eqns[e].prim);
  if (!any) return true;
  int cap = inlined_count(j) + 1, n = 0;
  JaxprEqn *eqns = malloc((size_t)cap * sizeof *eqns);
  if (!eqns) {
    error_set(JX_ERR_OOM, "jaxpr: out of memory inlining");
    return false;
  }
  bool ok = true;
  for (int e = 0; e < j->neqns; e++) {
    JaxprEqn *q = &j->eqns[e];
    if (!inlinable(q->prim)) {
      eqns[n++] = *q;
      continue;
    }
    if (ok) ok = inline_one(j, q, eqns, &n);
    eqn_clear(q);
  }
  free(j->eqns);
  j->eqns = eqns;
  j->neqns = n;
  j->ecap = cap;
  /* the inlined equations may hold calls themselves */
  return ok && jaxpr_inline_calls(j);
}

bool jaxpr_has_custom_rules(const Jaxpr *j) {
  for (int e = 0; e < j->neqns; e++) {
    const JaxprEqn *q = &j->eqns[e];
    if (q->prim == PRIM_custom_jvp_call || q->prim == PRIM_custom_vjp_call || q->prim == PRIM_checkpoint ||
        q->prim == PRIM_special_call)
      return true;
    if (q->params.jaxpr && jaxpr_has_custom_rules(q->params.jaxpr)) return true;
    for (int b = 0; b < q->params.nbranches; b++)
      if (jaxpr_has_custom_rules(q->params.branches[b])) return true;
  }
  return false;
}

Jaxpr *jaxpr_inlined_copy(Jaxpr *j) {
  Jaxpr *c = jaxpr_new();
  int *in = malloc((size_t)(j->nin + 1) * sizeof *in), *out = malloc((size_t)(j->nout + 1) * sizeof *out);
  bool ok = c && in && out;
  for (int i = 0; ok && i < j->nin; i++)
    ok = (in[i] = jaxpr_add_var(c, &j->vars[j->invars[i]])) >= 0 && jaxpr_add_invar(c, in[i]);
  for (int o = 0; ok && o < j->nout; o++)
    ok = (out[o] = jaxpr_add_var(c, &j->vars[j->outvars[o]])) >= 0 && jaxpr_add_outvar(c, out[o]);
  PrimParams pp = {.jaxpr = j};
  ok = ok && jaxpr_add_eqn(c, PRIM_jit, &pp, j->nin, in, j->nout, out) && jaxpr_inline_calls(c);
  if (ok && j->name && !(c->name = strdup(j->name))) ok = false;
  free(in), free(out);
  if (!ok) {
    if (!error_pending()) error_set(JX_ERR_OOM, "jaxpr: out of memory copying %s", j->name ? j->name : "a jaxpr");
    jaxpr_free(c);
    return NULL;
  }
  return c;
}

jx_status jaxpr_simplify(Jaxpr *j) {
  static const struct {
    const char *name;
    void (*run)(Jaxpr *);
  } passes[] = {{"cse", jaxpr_cse}, {"dce", jaxpr_dce}};
  for (size_t p = 0; p < sizeof passes / sizeof passes[0]; p++) {
    passes[p].run(j);
    if (config_debug_level() >= 2) {
      char *text = jaxpr_print(j);
      fprintf(stderr, "[jaxc] jaxpr after %s:\n%s\n", passes[p].name, text ? text : "?");
      free(text);
    }
    jx_status s = jaxpr_check(j);
    if (s != JX_OK) return s;
  }
  return JX_OK;
}
