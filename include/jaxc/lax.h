/* jaxc/lax.h -- part of the public API of jaxc; included by <jaxc.h>, never on its own.
 * jax.lax: convolutions, windows, scans, control flow, gather/scatter, indexed updates. */
#ifndef JAXC_LAX_H
#define JAXC_LAX_H
#ifndef JAXC_H
#error "include <jaxc.h>, not <jaxc/lax.h>"
#endif

/* ------------------------------------------------------------------ lax */
/* jax.lax functions built from primitives (src/lib/lax.c, lax_conv.c); all of them are
 * differentiable and batchable through their primitives, and jit-compatible. */

/* lax.dot_general(lhs, rhs, ((lhs_contracting, rhs_contracting), (lhs_batch,
 * rhs_batch))): paired axes must have equal sizes; axes may be negative and may not
 * repeat within an operand. Result dims: batch, lhs free, rhs free (lax's order).
 * The result dtype is lax's with preferred_element_type=None, not jnp's promotion: the
 * operand dtype XLA ranks higher (complex, then a float's exponent and mantissa bits,
 * then bit width, then signed; int8 x uint8 gives int8 and wraps as JAX, float16 x
 * bfloat16 bfloat16), both operands converted to it; weak only where both are.
 * float16/bfloat16 accumulate in float32, bool is an or of ands. Errors: JX_ERR_SHAPE
 * for bad or mismatched axes, JX_ERR_VALUE for NULL. */
jx_array *jx_lax_dot_general(jx_array *lhs, jx_array *rhs, int ncontract,
                             const int *lhs_contracting, const int *rhs_contracting,
                             int nbatch, const int *lhs_batch, const int *rhs_batch);
/* jnp.einsum(subscripts, *operands) in NumPy's syntax: terms of letters a-z A-Z with at
 * most one "..." each, separated by ',', optional "->output" (spaces ignored). Without
 * "->" the output is the ellipsis dims, then the letters used once in ASCII order.
 * Repeated letters in a term take a diagonal; letters absent from the output are
 * summed; size-1 dims broadcast. Lowered to diagonals (strided slices), reduce_sum and
 * a left-to-right chain of dot_generals. Operands promote together (JAX rules).
 * Errors: JX_ERR_VALUE for malformed subscripts or a term count != n, JX_ERR_SHAPE
 * for terms that do not fit their operands or labels with conflicting sizes. */
jx_array *jx_einsum(const char *subscripts, int n, jx_array *const *operands);

/* Padding of a windowed op: explicit (lo, hi) pairs -- a `pads` array of 2 * nspatial
 * entries lo0, hi0, lo1, hi1, ...; negative amounts crop -- or one of JAX's strings:
 * VALID (none), SAME (output extent ceil(in / stride), odd padding's extra element at
 * the end), SAME_LOWER (extra element at the start). pads is ignored unless EXPLICIT. */
typedef enum jx_padding {
  JX_PADDING_EXPLICIT,
  JX_PADDING_VALID,
  JX_PADDING_SAME,
  JX_PADDING_SAME_LOWER
} jx_padding;

/* Rarely used options of a convolution; NULL, or a zero-initialized struct, gives
 * JAX's defaults. Arrays have nspatial entries. */
typedef struct jx_conv_options {
  const int64_t *lhs_dilation; /* NULL: all 1 (interior spacing of the input) */
  const int64_t *rhs_dilation; /* NULL: all 1 (atrous kernel spacing) */
  /* Dimension numbers as lax's strings, all three or none: lhs and out contain 'N'
   * (batch) and 'C' (features), rhs 'O' and 'I', and each the same spatial letters
   * ("NCHW", "OIHW", "NCHW"; "NHWC", "HWIO", "NHWC"). Spatial dims pair up in the
   * order of rhs_spec; strides, dilations and pads follow that order. NULL: "NC...",
   * "OI...", "NC..." (conv_transpose: "NHWC"-style; see there). */
  const char *lhs_spec, *rhs_spec, *out_spec;
  int64_t feature_group_count; /* 0 means 1: features split group-major */
  int64_t batch_group_count;   /* 0 means 1: the lhs batch splits group-major */
} jx_conv_options;

/* lax.conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
 * rhs_dilation, dimension_numbers, feature_group_count, batch_group_count): an n-d
 * convolution (cross-correlation, as XLA's) of lhs (N, C, spatial...) with rhs (O, I,
 * window...) giving (N / batch_group_count, O, out...), in the layouts the options
 * name. lhs and rhs have rank nspatial + 2 and one dtype; window_strides (NULL: 1) has
 * nspatial entries. Output extent per spatial dim: max(0, floor((dilated input + lo +
 * hi - dilated window) / stride) + 1); SAME/VALID are computed on the undilated input
 * and the dilated window (and are an error with lhs dilation, as in JAX). Computed as
 * one dot_general of the stacked window taps (strided-slice views) with the kernel;
 * float16/bfloat16 accumulate in float32. Errors: JX_ERR_SHAPE for ranks or feature /
 * group counts that do not fit, JX_ERR_DTYPE for differing dtypes, JX_ERR_VALUE for
 * bad dimension numbers, strides or dilations < 1, NULL arguments. */
jx_array *jx_lax_conv_general_dilated(jx_array *lhs, jx_array *rhs, int nspatial,
                                      const int64_t *window_strides, jx_padding padding,
                                      const int64_t *pads, const jx_conv_options *options);
/* lax.conv(lhs, rhs, window_strides, padding): NC.../OI... layouts, no dilation. */
jx_array *jx_lax_conv(jx_array *lhs, jx_array *rhs, int nspatial,
                      const int64_t *window_strides, jx_padding padding,
                      const int64_t *pads);
/* lax.conv_transpose(lhs, rhs, strides, padding, rhs_dilation, dimension_numbers,
 * transpose_kernel): a convolution with unit strides of lhs dilated by `strides`. SAME
 * and VALID give the padding of the forward conv's gradient (_conv_transpose_padding);
 * explicit pads are the transposed conv's own (use_consistent_padding=False). Default
 * layouts (NULL specs) are TensorFlow's: "NC"/"IO"/"NC", "NHC"/"HIO"/"NHC",
 * "NHWC"/"HWIO"/"NHWC", "NHWDC"/"HWDIO"/"NHWDC" for 0-3 spatial dims. transpose_kernel
 * flips the kernel's spatial dims and swaps its O and I (Keras' Conv2DTranspose).
 * options: only rhs_dilation and the specs apply (others JX_ERR_VALUE). */
jx_array *jx_lax_conv_transpose(jx_array *lhs, jx_array *rhs, int nspatial,
                                const int64_t *strides, jx_padding padding,
                                const int64_t *pads, bool transpose_kernel,
                                const jx_conv_options *options);

/* The reduction of a windowed op; its init value is the identity (0, 1, -inf or the
 * dtype's lowest, +inf or the dtype's highest), as lax.reduce_window_{sum,max,min}. */
typedef enum jx_window_op {
  JX_WINDOW_SUM,
  JX_WINDOW_PROD,
  JX_WINDOW_MAX,
  JX_WINDOW_MIN
} jx_window_op;
/* lax.reduce_window(x, identity, op, window_dimensions, window_strides, padding,
 * base_dilation, window_dilation): every array has ndim(x) entries (NULL strides and
 * dilations: 1); padding and base-dilation gaps hold the identity; SAME/VALID are
 * computed on the undilated operand and the dilated window. NaN propagates through
 * max/min. sum/prod need a numeric dtype, complex included (JX_ERR_DTYPE); max/min of
 * bool are or/and, of complex JX_ERR_UNSUPPORTED (JAX's are lexicographic).
 * Built as a reduction over the stacked window taps (strided-slice views). */
jx_array *jx_lax_reduce_window(jx_array *x, jx_window_op op,
                               const int64_t *window_dimensions,
                               const int64_t *window_strides, jx_padding padding,
                               const int64_t *pads, const int64_t *base_dilation,
                               const int64_t *window_dilation);
/* flax.linen.max_pool / avg_pool: x is (batch..., spatial..., features) with nspatial
 * spatial dims before the last (NHWC for images); window_shape and strides (NULL: 1)
 * have nspatial entries, pads 2 * nspatial. max_pool pads with -inf (ints: the lowest
 * value). avg_pool divides the window sum by the window size (count_include_pad) or by
 * the number of non-padding elements (flax: the result is then promoted with the
 * default float); integer inputs give floats. The gradient of a max at tied elements
 * is shared evenly among them (reduce_max's JVP); JAX's goes to one of them. */
jx_array *jx_lax_max_pool(jx_array *x, int nspatial, const int64_t *window_shape,
                          const int64_t *strides, jx_padding padding, const int64_t *pads);
jx_array *jx_lax_avg_pool(jx_array *x, int nspatial, const int64_t *window_shape,
                          const int64_t *strides, jx_padding padding, const int64_t *pads,
                          bool count_include_pad);

/* ---- Control flow (jax.lax.cond / jax.lax.switch). Branches are jx_fn callbacks
 * (jx_fn_new: an impl with a context pointer, or any transformed/jitted jx_fn) taking
 * the nops operands and giving the same number of outputs. Each branch is traced once
 * on abstract values of the operands' types into a sub-program, and the choice is one
 * `cond` equation: under jit it stays in the compiled program and the branch is picked
 * at run time; jvp/grad/vjp differentiate every branch (JAX's rules), and vmap with a
 * batched index runs every branch and selects per lane (lax.select_n), an unbatched
 * index stays a cond. out[] receives jx_fn_nout(branch) new references.
 * Errors: JX_ERR_SHAPE/JX_ERR_DTYPE for a non-scalar or non-integer index or for
 * branches whose outputs differ in shape or dtype (the message names output, both
 * types and both branches); JX_ERR_VALUE for arity mismatches or NULLs;
 * JX_ERR_UNSUPPORTED for more than 16 branches.
 * Branches may close over values an enclosing transformation traces (through their
 * context pointer): as JAX, the union of every branch's closed-over values (each once,
 * cond's true_fn's first) becomes leading operands of the cond, taken by every branch,
 * so grad, jvp and vmap see them and make_jaxpr prints them before the operands.
 *
 * lax.switch(index, branches, *operands): runs branches[clamp(index, 0, n-1)]; index
 * is an integer scalar. With one branch it is called directly (as JAX). */
jx_status jx_lax_switch(jx_array *index, int nbranches, jx_fn *const *branches, int nops,
                        jx_array *const *operands, jx_array **out);
/* lax.cond(pred, true_fun, false_fun, *operands): pred is a bool or numeric scalar
 * (nonzero is true). Example (README "Control flow", t and e the jx_fn of sin and cos):
 *   jx_array *out[1];
 *   jx_lax_cond(pred, t, e, 1, (jx_array *[]){x}, out);  // sin(x) if pred else cos(x) */
jx_status jx_lax_cond(jx_array *pred, jx_fn *true_fn, jx_fn *false_fn, int nops,
                      jx_array *const *operands, jx_array **out);

/* ---- Loops (jax.lax.while_loop / fori_loop / scan / map). Loop bodies are jx_fn
 * callbacks (jx_fn_new: an impl with a context pointer, or any transformed/jitted
 * jx_fn); the carry is an array of ncarry jx_array. Each callback is traced once on
 * abstract values of the carries' types into a sub-program and the loop is one
 * `while` or `scan` equation, printed by jx_make_jaxpr as JAX prints it. Values a
 * callback closes over that an enclosing transformation traces (a weight under
 * jx_grad, say) become the loop's consts, so loops differentiate through them. The
 * body must give every carry back with its shape and dtype (a weakly typed initial
 * value whose carry comes back strong or of another dtype becomes a strong
 * result_type(initial, body's output) and the body is traced again, as JAX's
 * _promote_weak_typed_input: a scalar 0.5 carried through a float16 body becomes
 * float16); otherwise JX_ERR_SHAPE / JX_ERR_DTYPE
 * naming the carry, both types and the body. JX_ERR_VALUE for NULLs and arity
 * mismatches. out[] / carry_out[] / ys[] receive new references.
 *
 * lax.while_loop(cond_fun, body_fun, init_val): cond_fn takes the ncarry carries and
 * gives a bool scalar (JX_ERR_DTYPE / JX_ERR_SHAPE otherwise); body_fn takes and gives
 * the carries. jvp differentiates it (one loop over carries and tangents); vmap with
 * a batched predicate runs until every lane is done, keeping finished lanes' carries
 * (select per lane); reverse mode is JX_ERR_UNSUPPORTED, as in JAX -- use
 * jx_lax_while_loop_bounded. Example (README "Control flow", cf and bf the jx_fn of its
 * lt_10 and step):
 *   jx_array *carry[2];
 *   jx_lax_while_loop(cf, bf, 2, (jx_array *[]){i0, y0}, carry); */
jx_status jx_lax_while_loop(jx_fn *cond_fn, jx_fn *body_fn, int ncarry, jx_array *const *init,
                            jx_array **out);
/* jaxc's while_loop with at most max_trips (>= 1, JX_ERR_VALUE otherwise) trips, which
 * makes it reverse-differentiable (past JAX): the forward pass keeps the carries of
 * the trips actually taken and the backward pass runs the transposed body once per
 * trip in reverse, so memory grows with the trips taken, not with max_trips. Under jit
 * (where the trips taken are not known when the gradient is traced) the same gradient
 * comes from two scans over max_trips: the forward one saves every trip's carries and
 * whether the trip was taken, the reversed one skips the trips not taken (memory then
 * grows with max_trips). Same results as jx_lax_while_loop when the loop ends before
 * max_trips. */
jx_status jx_lax_while_loop_bounded(jx_fn *cond_fn, jx_fn *body_fn, int64_t max_trips, int ncarry,
                                    jx_array *const *init, jx_array **out);
/* lax.fori_loop(lower, upper, body_fun, init_val): body_fn takes (i, carries...) and
 * gives the carries; i has lower's and upper's promoted integer dtype. Concrete
 * bounds give a scan of max(upper - lower, 0) trips (reverse-differentiable), traced
 * bounds a while_loop, as JAX does. JX_ERR_DTYPE for non-integer or non-scalar bounds. */
jx_status jx_lax_fori_loop(jx_array *lower, jx_array *upper, jx_fn *body_fn, int ncarry,
                           jx_array *const *init, jx_array **out);
/* lax.scan(f, init, xs, length, reverse, unroll): f takes (carries..., x slices...)
 * and gives (carries..., y slices...): carry_out[] gets the ncarry final carries and
 * ys[] the jx_fn_nout(f) - ncarry outputs stacked along a new leading axis of
 * `length`. Each xs is sliced along its leading axis, which must equal length
 * (length < 0: taken from the xs; required without xs). reverse runs from the last
 * slice to the first (ys keep the xs' order); unroll is a hint (>= 1; JX_ERR_VALUE
 * below, as JAX's ValueError). jvp, vjp/grad (a reversed scan over the carries saved by
 * the forward scan, the body's primal work recomputed per trip), vmap and jit all
 * apply. */
jx_status jx_lax_scan(jx_fn *f, int ncarry, jx_array *const *init, int nxs, jx_array *const *xs,
                      int64_t length, bool reverse, int unroll, jx_array **carry_out, jx_array **ys);
/* lax.map(f, xs): f over the leading axis of the nxs xs (>= 1), its jx_fn_nout(f)
 * outputs stacked into ys (a scan without carry). */
jx_status jx_lax_map(jx_fn *f, int nxs, jx_array *const *xs, jx_array **ys);
/* lax.associative_scan(fn, elems, reverse, axis): the inclusive prefix combination of
 * the nelems (1..16) arrays `elems` along `axis` (negative counts from the end of
 * elems[0]; every elems has the same length there) under the associative fn, which
 * takes (a..., b...) -- 2 * nelems arrays, slices of the elems with any length along
 * the axis -- and gives nelems arrays of a's shapes and dtypes: out[i][k] combines
 * elements 0..k in order (reverse: k..n-1, as JAX scans the flipped arrays). As JAX:
 * the parallel odd/even recursion, O(n) calls of fn on arrays halving in length,
 * ceil(log2 n) levels, each traced like any jaxc code (grad, vmap and jit see only
 * primitives). Unlike JAX 0.10.2, a negative axis works with reverse. Errors:
 * JX_ERR_VALUE for fn's arity, JX_ERR_SHAPE for an axis out of range, unequal
 * lengths, or an fn output that changes shape (JX_ERR_DTYPE: dtype), naming both. */
jx_status jx_lax_associative_scan(jx_fn *fn, int nelems, jx_array *const *elems, bool reverse, int axis,
                                  jx_array **out);

/* lax.cumsum / cumprod / cummax / cummin(x, axis, reverse): inclusive scans along axis
 * (negative counts from the end), same dtype and shape; numeric dtypes only
 * (JX_ERR_DTYPE for bool); cummax/cummin of complex order lexicographically on (re, im)
 * as JAX (jx_maximum), from the identity -inf + 0i (inf + 0i), as JAX's. NaN propagates
 * (complex max/min: a NaN part loses to the next element, as in JAX). Float and
 * complex sums and products round as XLA on the CPU computes them, bit for bit with
 * JAX: XLA's reduce-window rewriter (reduce_window_rewriter.cc) tiles a scan longer than
 * 16 into rows of 16 scanned from the identity in index order (each reverse output its
 * own window sum), then scans the rows' totals the same way and adds them back: O(n)
 * work, log16(n) levels of slices, adds and concatenates, about 38 adds for n = 1024
 * forward (reverse: about 8 per element in the rows). Integer, max and min scans, exact
 * in any order, are log-step (Hillis-Steele) scans of pad/slice views: ceil(log2 n)
 * elementwise ops. */
jx_array *jx_lax_cumsum(jx_array *x, int axis, bool reverse);
jx_array *jx_lax_cumprod(jx_array *x, int axis, bool reverse);
jx_array *jx_lax_cummax(jx_array *x, int axis, bool reverse);
jx_array *jx_lax_cummin(jx_array *x, int axis, bool reverse);
/* jnp.cumsum / cumprod(x, axis): JX_AXIS_NONE (or a 0-d x) flattens; bool accumulates
 * in the default int dtype; the result is strongly typed. */
jx_array *jx_cumsum(jx_array *x, int axis);
jx_array *jx_cumprod(jx_array *x, int axis);

/* lax.dynamic_slice(x, start_indices, slice_sizes): start_indices holds ndim(x) 0-d
 * integer arrays (traced values are fine); a negative start counts from the end once,
 * then each start is clamped to [0, dim - size], as JAX and XLA do: the slice is
 * always in bounds. slice_sizes in [0, dim] (JX_ERR_SHAPE otherwise). */
jx_array *jx_lax_dynamic_slice(jx_array *x, jx_array *const *start_indices,
                               const int64_t *slice_sizes);
/* lax.dynamic_update_slice(x, update, start_indices): x with the box at the (wrapped,
 * clamped) starts replaced by update, which has x's rank and dtype (JX_ERR_DTYPE) and
 * fits inside x (JX_ERR_SHAPE). The result is strongly typed, as JAX's. */
jx_array *jx_lax_dynamic_update_slice(jx_array *x, jx_array *update,
                                      jx_array *const *start_indices);
/* lax.select_n(which, *cases): cases[which] elementwise. cases share one shape and
 * dtype; which is bool (n <= 2: false picks cases[0]) or an integer, 0-d or of the
 * cases' shape; out-of-range values pick the first or last case (XLA's lowering). */
jx_array *jx_lax_select_n(jx_array *which, int n, jx_array *const *cases);

/* lax.RoundingMethod (same values as JAX's). */
typedef enum jx_rounding_method {
  JX_ROUNDING_AWAY_FROM_ZERO = 0,
  JX_ROUNDING_TO_NEAREST_EVEN = 1
} jx_rounding_method;
/* lax.round(x, rounding_method): floating x only (JX_ERR_DTYPE). */
jx_array *jx_lax_round(jx_array *x, jx_rounding_method method);
/* lax.reduce_precision(x, exponent_bits, mantissa_bits): x rounded to a float format of
 * that many exponent and mantissa bits, kept in x's dtype -- XLA's reduce-precision op:
 * the mantissa rounds to nearest even; values whose exponent then exceeds the format's
 * range become signed infinity, those at or below its smallest normal exponent (its
 * denormals) signed zero (the format has no denormals; widths at or above x's own leave
 * that part alone, so (8, 7) of a float32 keeps float32 denormals); NaN stays the same
 * NaN (mantissa_bits 0 included, as XLA's cpu). Floating, non-complex x (JX_ERR_DTYPE);
 * exponent_bits >= 1, mantissa_bits >= 0 (JX_ERR_VALUE, as JAX). Derivatives as JAX's
 * (it is linear there): the tangent and the cotangent are reduced the same way.
 * Composed from bitcasts and integer ops inside a custom_jvp (make_jaxpr shows that,
 * not a reduce_precision equation). bf16: (8, 7); f16: (5, 10); e4m3-like: (4, 3). */
jx_array *jx_lax_reduce_precision(jx_array *x, int exponent_bits, int mantissa_bits);

/* lax.erf, lax.erfc: the error function and its complement (jax.scipy.special.erf).
 * lax.erf_inv: its inverse on (-1, 1), +-inf at +-1, NaN outside, computed as XLA does
 * (Giles' single/double precision polynomials in w = -log1p(-x^2); "Approximating the
 * erfinv function", GPU Computing Gems, 2011) in one fused vector kernel: within a few
 * float32 ulps of JAX's (which fuses multiply-adds); its gradient is that of the
 * approximation. Floating x only (JX_ERR_DTYPE otherwise);
 * float16/bfloat16 are computed in float32. Accuracy of erf/erfc in docs/api.md. */
jx_array *jx_lax_erf(jx_array *x);
jx_array *jx_lax_erfc(jx_array *x);
jx_array *jx_lax_erf_inv(jx_array *x);

/* Out-of-bounds index modes of gathers (JAX's GatherScatterMode / jnp's mode=). */
typedef enum jx_index_mode {
  JX_INDEX_FILL,              /* "fill" (JAX's default): out-of-range reads give the fill
                                 value: NaN (NaN + 0j for complex), the lowest signed /
                                 highest unsigned int, true */
  JX_INDEX_CLIP,              /* "clip": indices clamp into range */
  JX_INDEX_PROMISE_IN_BOUNDS, /* "promise_in_bounds": no wrapping; jaxc clamps */
  JX_INDEX_WRAP               /* "wrap": jnp.take only -- indices mod n; every other
                                 function rejects it (JX_ERR_VALUE) as JAX's gather and
                                 scatter do ('Unknown gather mode "wrap"') */
} jx_index_mode;
/* jnp.take_along_axis(arr, indices, axis, mode): indices have arr's rank and broadcast
 * against it off `axis` (JX_AXIS_NONE: arr flattened, indices 1-d); negative indices
 * count from the end once (except PROMISE_IN_BOUNDS). JX_ERR_DTYPE for non-integer
 * indices, JX_ERR_SHAPE for shapes that do not fit, JX_ERR_VALUE for JX_INDEX_WRAP (as
 * JAX's take_along_axis(..., mode="wrap"): 'Unknown gather mode "wrap"'). */
jx_array *jx_take_along_axis(jx_array *arr, jx_array *indices, int axis, jx_index_mode mode);
/* jnp.take(x, indices, axis, mode): JX_INDEX_FILL is jx_take; CLIP and PROMISE_IN_BOUNDS
 * clamp the indices into [0, n) without wrapping negative ones first, as JAX's take
 * (take(x, -1, mode="clip") is x[0]; x.at[idx].get(mode="clip") wraps them once, as
 * indexing does: pass where(idx < 0, idx + n, idx) for that). WRAP takes jnp.mod(indices,
 * n) in the indices' dtype (take(arange(5), [-7, 12], mode="wrap") is [3, 2]). axis
 * JX_AXIS_NONE flattens x. JX_ERR_DTYPE for non-integer indices, JX_ERR_SHAPE for a
 * non-empty take from an empty axis, JX_ERR_VALUE for WRAP with an axis longer than the
 * indices' dtype holds (int8 indices into 300 rows: JAX's OverflowError). */
jx_array *jx_take_mode(jx_array *x, jx_array *indices, int axis, jx_index_mode mode);

/* ------------------------------------------- indexed updates and more sorting */
/* (Declared here rather than with jx_sort: they use jx_index_mode.)
 * JAX's x.at[idx].op(y) for an integer index array along one axis (x.at[idx] for axis 0,
 * x.at[:, idx] for axis 1, ...): y broadcasts to the gathered shape x.shape[:axis] +
 * idx.shape + x.shape[axis+1:]; x and y promote together, the update is computed in that
 * dtype and the result converted back to x's dtype and weak type, as JAX's _scatter_impl
 * (int32 [10, 11].at[[0, 1]].add([1.7, -1.7]) is [11, 9]: 11.7 and 9.3 truncated). Negative indices wrap once (idx + n); mode JX_INDEX_FILL is JAX's
 * default "drop" (updates still out of range are ignored), as is PROMISE_IN_BOUNDS (XLA's
 * scatter skips them on CPU), JX_INDEX_CLIP clamps them into range. at_set with duplicate indices: the last
 * occurrence wins (what JAX on CPU does; JAX documents it as unspecified), and the
 * gradient reaches only that update. at_mul/min/max combine every update of a position
 * (O(n*m) work for n positions and m indices). Differentiable, batchable, jittable.
 * JX_ERR_DTYPE for non-integer idx and for at_add / at_mul when x and y promote to bool
 * (JAX: "add does not accept dtype bool"; set/min/max take bool, and a bool x with a
 * numeric y computes in y's dtype), JX_ERR_SHAPE for a 0-d x, a bad axis or a y that
 * does not broadcast, JX_ERR_VALUE for NULL arguments or an unknown mode (JX_INDEX_WRAP
 * too: JAX's x.at[i].add(y, mode="wrap") raises 'Unknown gather mode "wrap"'). */
jx_array *jx_at_add(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode);
jx_array *jx_at_set(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode);
jx_array *jx_at_mul(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode);
jx_array *jx_at_min(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode);
jx_array *jx_at_max(jx_array *x, jx_array *idx, jx_array *y, int axis, jx_index_mode mode);
/* x.at[idx].get(mode=, fill_value=) and x.at[idx].set / add / multiply / min / max(y,
 * mode=) with a whole index expression (jx_index, see jx_getitem): idx selects the
 * elements of x[idx], whose shape S y broadcasts to (JX_ERR_SHAPE otherwise).
 * get: JX_INDEX_PROMISE_IN_BOUNDS (JAX's default for get) and JX_INDEX_CLIP clamp as
 * jx_getitem does; JX_INDEX_FILL gives fill_value where any index of an element is out of
 * range after wrapping negatives once (fill_value NAN: JAX's default fill, as jx_take's;
 * else converted to x's dtype: 2.7 into int32 is 2).
 * Updates: JX_INDEX_FILL (JAX's default "drop") and PROMISE_IN_BOUNDS drop updates whose
 * indices are out of range after wrapping (XLA's scatter skips them), JX_INDEX_CLIP
 * clamps them. Computed as the one-axis
 * jx_at_* on x flattened, at the flat positions of S's elements (updates in C order of
 * S: for set with duplicates the last wins, as JAX on CPU), so promotion, the result's
 * dtype (x's, weak iff x is), the gradients and the costs are those of jx_at_*
 * (mul/min/max: O(x.size * S.size)). An empty S returns x unchanged (y unchecked, as in
 * JAX). Errors: those of jx_getitem (masks must be concrete), NULL y (JX_ERR_VALUE), an
 * unknown mode (JX_ERR_VALUE), and jx_at_*'s dtype errors (add/mul of bools). */
jx_array *jx_at_index_get(jx_array *x, int n, const jx_index *idx, jx_index_mode mode,
                          double fill_value);
jx_array *jx_at_index_set(jx_array *x, int n, const jx_index *idx, jx_array *y, jx_index_mode mode);
jx_array *jx_at_index_add(jx_array *x, int n, const jx_index *idx, jx_array *y, jx_index_mode mode);
jx_array *jx_at_index_mul(jx_array *x, int n, const jx_index *idx, jx_array *y, jx_index_mode mode);
jx_array *jx_at_index_min(jx_array *x, int n, const jx_index *idx, jx_array *y, jx_index_mode mode);
jx_array *jx_at_index_max(jx_array *x, int n, const jx_index *idx, jx_array *y, jx_index_mode mode);
/* jnp.lexsort(keys, axis): indices (default int) that sort by the n keys (same shape,
 * n >= 1), the LAST key primary, stable, JAX's total order per key. */
jx_array *jx_lexsort(int n, jx_array *const *keys, int axis);
/* lax.top_k(x, k) along the last axis: the k largest (values, x's dtype) and their
 * positions (int32), descending, ties keeping the lower index first. Floats are ordered
 * as JAX's top_k orders them: IEEE total order (NaN > +inf, +0.0 > -0.0, -NaN lowest).
 * The gradient of values flows to the selected elements. 0 <= k <= x.shape[-1] and
 * x at least 1-d (JX_ERR_VALUE / JX_ERR_SHAPE). Either output pointer may be NULL. */
jx_status jx_top_k(jx_array *x, int64_t k, jx_array **values, jx_array **indices);
/* jnp.searchsorted(a, v, side) with JAX's default method ('scan'): for each v the
 * insertion position (int32, v's shape) in the 1-d ascending a -- the count of a < v
 * (left) or a <= v (side_right) -- by a binary search, as JAX's (so an unsorted a gives
 * JAX's answer too): O(len(v) log len(a)) work, O(len(v)) memory. jnp.sort's order
 * (-0.0 == 0.0, NaN last; complex by real, then imaginary part). a and v promote
 * together. JX_ERR_SHAPE unless a is 1-d, JX_ERR_UNSUPPORTED for len(a) >= 2^31. */
jx_status jx_searchsorted(jx_array *a, jx_array *v, bool side_right, jx_array **out);
/* jnp.searchsorted(a, v, side, sorter): the search in a[sorter] -- sorter (1-d, integer)
 * gathers a as JAX's indexing does, a[sorter] (jx_getitem: negative entries count from
 * the end once, the rest clamp into range; int64 entries beyond int32 then wrap to JAX's
 * int32 index dtype first), so the result indexes the sorted order, not a. JX_ERR_DTYPE for a
 * non-integer sorter (a bool one is a mask in JAX), JX_ERR_SHAPE for a sorter that is not
 * 1-d (JAX then searches each row of a[sorter]) or a non-empty sorter of an empty a. */
jx_status jx_searchsorted_with_sorter(jx_array *a, jx_array *v, bool side_right, jx_array *sorter,
                                      jx_array **out);
/* jnp.unique(x, size=size, fill_value=fill_value, return_index, return_inverse,
 * return_counts) of the flattened x: the sorted unique values (NaNs count as one,
 * -0.0 == 0.0 keeping the first in sorted order) as `size` entries -- truncated, or
 * padded with fill_value (NULL: the smallest value, as JAX). size < 0 means no static
 * size: the exact count, read from the data (eager only; JX_ERR_VALUE under a trace).
 * Optional outputs (NULL to skip): indices of first occurrences (padded as JAX: the
 * smallest value's), inverse (x's shape: each element's position in values), counts
 * (padded with 0); all in the default int dtype. */
jx_status jx_unique(jx_array *x, int64_t size, jx_array *fill_value, jx_array **values,
                    jx_array **indices, jx_array **inverse, jx_array **counts);
/* jnp.unique(x, axis=axis, ...): the unique slices of x along axis (JX_AXIS_NONE: jx_unique),
 * sorted lexicographically (the first element of a slice primary; jnp.sort's order per
 * element; slices equal when every element is, NaN equal to NaN) -- values of x's shape
 * with `size` entries along axis (truncated, or padded with fill_value broadcast to a
 * slice; NULL: the first unique slice, as JAX), indices (size,) of first occurrences,
 * inverse (x.shape[axis],) and counts (size,) in the default int dtype. size < 0: the
 * exact count (eager only). As JAX for empty inputs: a zero-length axis gives x (or
 * size slices of fill_value) and empty indices/inverse/counts; zero-size slices give one
 * slice (size with a fill_value), indices [0], inverse zeros, counts [len]. JX_ERR_SHAPE
 * for a bad axis or a 0-d x, JX_ERR_VALUE for a size > 0 over an empty axis without
 * fill_value. O(m) stable sorts for slices of m elements. */
jx_status jx_unique_axis(jx_array *x, int axis, int64_t size, jx_array *fill_value,
                         jx_array **values, jx_array **indices, jx_array **inverse,
                         jx_array **counts);

/* ------------------------------------------------- collectives (lax.parallel) */
/* Inside jx_shard_map / jx_pmap, over the named mesh axis `axis_name` (src/lib/parallel.c;
 * jax/_src/lax/parallel.py). Every device of the axis must call the same collectives in the
 * same order. Outside one, or for a name the mesh does not have: JX_ERR_VALUE "unbound
 * axis name: x" (JAX's NameError). Results live on the operand's device. grad/jvp/vmap
 * apply inside the mapped function with JAX's rules (psum, all_gather, psum_scatter,
 * ppermute and all_to_all are linear; psum transposes to psum, all_gather to
 * psum_scatter, ppermute to the inverse permutation; pmax and pmin, as in JAX, have no
 * derivative: JX_ERR_UNSUPPORTED). */

/* lax.psum(x, axis_name): the sum of x over the devices of the axis (same dtype; bool:
 * JX_ERR_DTYPE). Every device gets the same bits (summed in device order). */
jx_array *jx_lax_psum(jx_array *x, const char *axis_name);
/* lax.pmean: psum(x) / axis size (integers give float32, int64 float64, as JAX's true
 * division). */
jx_array *jx_lax_pmean(jx_array *x, const char *axis_name);
/* lax.pmax / lax.pmin: the elementwise maximum / minimum over the devices. */
jx_array *jx_lax_pmax(jx_array *x, const char *axis_name);
jx_array *jx_lax_pmin(jx_array *x, const char *axis_name);
/* lax.all_gather(x, axis_name, axis=axis, tiled=tiled): every device's x stacked along a
 * new dimension `axis` of size N (the axis size) in device order, or with tiled
 * concatenated along the existing dimension `axis` (N times longer). JX_ERR_SHAPE for an
 * axis out of range. */
jx_array *jx_lax_all_gather(jx_array *x, const char *axis_name, int axis, bool tiled);
/* lax.psum_scatter(x, axis_name, scatter_dimension, tiled): device i gets block i of
 * psum(x) along scatter_dimension: with tiled, dim/N rows (dim divisible by N); without,
 * dim must equal N and the dimension is removed. JX_ERR_SHAPE otherwise. */
jx_array *jx_lax_psum_scatter(jx_array *x, const char *axis_name, int scatter_dimension,
                              bool tiled);
/* lax.ppermute(x, axis_name, perm): perm is npairs (source, destination) index pairs
 * (each source and each destination at most once); a device no pair sends to gets
 * zeros. JX_ERR_VALUE for an index out of range or a repeated one. */
jx_array *jx_lax_ppermute(jx_array *x, const char *axis_name, int npairs, const int (*perm)[2]);
/* lax.all_to_all(x, axis_name, split_axis, concat_axis, tiled): x is cut into N blocks
 * along split_axis; block j goes to device j, and each device joins the blocks it
 * receives, in device order, along concat_axis. With tiled, the split dimension shrinks
 * N times and the concat one grows N times; without, dim split_axis must equal N: it is
 * removed and a dimension of N inserted at concat_axis. JX_ERR_SHAPE otherwise. */
jx_array *jx_lax_all_to_all(jx_array *x, const char *axis_name, int split_axis, int concat_axis,
                            bool tiled);
/* lax.axis_index(axis_name): this device's index along the axis, an int32 scalar. */
jx_array *jx_lax_axis_index(const char *axis_name);
/* lax.axis_size(axis_name): the number of devices along the axis; -1 with JX_ERR_VALUE
 * when unbound. */
int64_t jx_lax_axis_size(const char *axis_name);

#endif /* JAXC_LAX_H */
