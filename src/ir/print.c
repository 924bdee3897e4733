/* print.c -- deterministic text of the kernel IR, stable enough for golden tests
 * (JAXC_DEBUG=3). Every non-leaf node becomes one SSA line in post-order,
 *   %1 = MOD i64 %0 6
 * leaves print inline (constants as values, loop indices as @gidx<24>, variables as
 * $acc:f32), and a last line names the result: "return %1". */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "ir/alu.h"

typedef struct {
  char *buf;
  size_t len, cap;
  bool oom;
} Str;

static void str_printf(Str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void str_printf(Str *s, const char *fmt, ...) {
  if (s->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = s->cap - s->len;
    int n = vsnprintf(s->buf ? s->buf + s->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < room) {
      s->len += (size_t)n;
      return;
    }
    size_t cap = (s->cap ? s->cap * 2 : 256) + (size_t)n;
    char *b = realloc(s->buf, cap);
    if (!b) {
      s->oom = true;
      return;
    }
    s->buf = b;
    s->cap = cap;
  }
}

static char *str_finish(Str *s, const char *who) {
  if (s->oom || !s->buf) {
    free(s->buf);
    error_set(JX_ERR_OOM, "%s: out of memory", who);
    return NULL;
  }
  return s->buf;
}

/* A constant as text: "true", "-3", "4294967295", "0.5", "-0.0", "nan", "-inf". Floats
 * print with enough digits to round-trip in their dtype, and always look like floats. */
static void print_value(Str *s, jx_dtype d, AluValue v) {
  if (dtype_is_complex(d)) { /* (re, im) */
    str_printf(s, "(");
    print_value(s, dtype_real_part(d), (AluValue){.f = v.c.re});
    str_printf(s, ", ");
    print_value(s, dtype_real_part(d), (AluValue){.f = v.c.im});
    str_printf(s, ")");
  } else if (d == JX_BOOL) {
    str_printf(s, "%s", v.i ? "true" : "false");
  } else if (dtype_is_unsigned(d)) {
    str_printf(s, "%" PRIu64, v.u);
  } else if (dtype_is_integer(d)) {
    str_printf(s, "%" PRId64, v.i);
  } else if (isnan(v.f)) {
    str_printf(s, "nan");
  } else if (isinf(v.f)) {
    str_printf(s, "%sinf", v.f < 0 ? "-" : "");
  } else {
    char tmp[40];
    snprintf(tmp, sizeof tmp, d == JX_FLOAT64 ? "%.17g" : "%.9g", v.f);
    /* shortest digits that still round-trip */
    for (int prec = 1; prec <= 17; prec++) {
      char t[40];
      snprintf(t, sizeof t, "%.*g", prec, v.f);
      if (alu_normalize(d, (AluValue){.f = strtod(t, NULL)}).f == v.f) {
        memcpy(tmp, t, sizeof t);
        break;
      }
    }
    bool looks_float = strpbrk(tmp, ".en") != NULL;
    str_printf(s, "%s%s", tmp, looks_float ? "" : ".0");
  }
}

static void print_operand(Str *s, const AluExp *e, const AluMap *num) {
  const void *v;
  if (e->nsrc && alu_map_get(num, e, &v)) {
    str_printf(s, "%%%lld", (long long)(intptr_t)v);
    return;
  }
  switch (e->op) {
  case ALU_CONST: print_value(s, e->dtype, e->value); break;
  case ALU_SPECIAL: str_printf(s, "@%s<%lld>", e->name ? e->name : "?", (long long)e->arg); break;
  case ALU_VARIABLE:
    str_printf(s, "$%s:%s", e->name ? e->name : "?", dtype_short_name(e->dtype));
    break;
  default: str_printf(s, "<%s>", alu_op_name(e->op)); break;
  }
}

/* Appends the SSA lines of e (each prefixed by `indent`) and its return line. */
static void print_exp(Str *s, const AluExp *e, const char *indent) {
  int64_t n;
  const AluExp **order = alu_toposort(e, &n);
  if (!order) {
    s->oom = s->oom || e != NULL;
    str_printf(s, "%sreturn <null>\n", indent);
    return;
  }
  AluMap num;
  alu_map_init(&num);
  int64_t next = 0;
  for (int64_t i = 0; i < n; i++) {
    const AluExp *x = order[i];
    if (!x->nsrc) continue;
    if (!alu_map_put(&num, x, (const void *)(intptr_t)next)) {
      s->oom = true;
      break;
    }
    str_printf(s, "%s%%%lld = %s %s", indent, (long long)next++, alu_op_name(x->op),
               dtype_is_valid(x->dtype) ? dtype_short_name(x->dtype) : "?");
    if (x->op == ALU_GLOBAL_INDEX) str_printf(s, " #%lld", (long long)x->arg);
    for (int j = 0; j < x->nsrc; j++) {
      str_printf(s, " ");
      print_operand(s, x->src[j], &num);
    }
    str_printf(s, "\n");
  }
  str_printf(s, "%sreturn ", indent);
  print_operand(s, e, &num);
  str_printf(s, "\n");
  alu_map_free(&num);
  free((void *)order);
}

char *alu_print(const AluExp *e) {
  Str s = {0};
  print_exp(&s, e, "");
  return str_finish(&s, "alu_print");
}

char *kernel_print(const Kernel *k) {
  Str s = {0};
  if (!k) return str_finish(&s, "kernel_print");
  str_printf(&s, "kernel size=%lld dtype=%s args=(", (long long)k->size,
             dtype_short_name(k->dtype));
  for (int i = 0; i < k->nargs && i < KERNEL_MAX_ARGS; i++)
    str_printf(&s, "%s%s", i ? ", " : "", dtype_short_name(k->arg_dtypes[i]));
  str_printf(&s, ")\n");
  if (k->has_pre) {
    str_printf(&s, "first phase: reduce %s %s identity=", alu_op_name(k->pre.op),
               dtype_short_name(k->pre.dtype));
    print_value(&s, k->pre.dtype, k->pre.identity);
    str_printf(&s, " of\n");
    print_exp(&s, k->pre_exp, "  ");
    str_printf(&s, "then (pre = its result):\n");
  }
  print_exp(&s, k->exp, "  ");
  for (int i = 0; i < k->nextra && i < KERNEL_MAX_OUTS - 1; i++) {
    str_printf(&s, "output %d dtype=%s\n", i + 1, dtype_short_name(k->extra_dtypes[i]));
    print_exp(&s, k->extra[i], "  ");
  }
  if (k->has_reduction) {
    const Reduction *r = &k->reduction;
    str_printf(&s, "reduce %s %s identity=", alu_op_name(r->op), dtype_short_name(r->dtype));
    print_value(&s, r->dtype, r->identity);
    str_printf(&s, " size=%lld\n", (long long)r->size);
    if (r->epilogue) {
      str_printf(&s, "epilogue\n");
      print_exp(&s, r->epilogue, "  ");
    }
    if (k->has_row_out) {
      str_printf(&s, "row output %d dtype=%s size=%lld (acc = the reduced value)\n", k->nextra + 1,
                 dtype_short_name(k->row_dtype), (long long)(k->size * r->size));
      print_exp(&s, k->row_exp, "  ");
    }
  }
  if (k->post) {
    char *q = kernel_print(k->post);
    if (!q) {
      free(s.buf);
      return NULL;
    }
    str_printf(&s, "group epilogue over groups of %lld (its last arg: output 0), outputs from %d:\n%s",
               (long long)k->post->reduction.size, 1 + k->nextra + k->has_row_out, q);
    free(q);
  }
  return str_finish(&s, "kernel_print");
}
