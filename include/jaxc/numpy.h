/* jaxc/numpy.h -- part of the public API of jaxc; included by <jaxc.h>, never on its own.
 * More jax.numpy, composed from the core functions. */
#ifndef JAXC_NUMPY_H
#define JAXC_NUMPY_H
#ifndef JAXC_H
#error "include <jaxc.h>, not <jaxc/numpy.h>"
#endif

/* ------------------------------------------------------- more jax.numpy */
/* src/lib/numpy/extra.c, composed from the functions above (grad/vmap/jit-safe). Axis
 * lists as in jx_sum; NULL inputs give JX_ERR_VALUE naming the function. */
/* jnp.nansum / nanprod / nanmax / nanmin / nanmean: NaNs ignored (float inputs; others
 * as jx_sum ...); an all-NaN slice gives NaN for nanmax/nanmin/nanmean. */
jx_array *jx_nansum(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_nanprod(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_nanmax(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_nanmin(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_nanmean(jx_array *x, int naxes, const int *axes, bool keepdims);
/* jnp.nanvar / nanstd(ddof): count - ddof <= 0 gives NaN; ints give float32 (int64: float64). */
jx_array *jx_nanvar(jx_array *x, int naxes, const int *axes, int64_t ddof, bool keepdims);
jx_array *jx_nanstd(jx_array *x, int naxes, const int *axes, int64_t ddof, bool keepdims);
/* jnp.nanargmax / nanargmin(axis or JX_AXIS_NONE): an all-NaN slice gives -1. */
jx_array *jx_nanargmax(jx_array *x, int axis, bool keepdims);
jx_array *jx_nanargmin(jx_array *x, int axis, bool keepdims);
/* jnp.nancumsum / nancumprod(axis or JX_AXIS_NONE): NaNs count as 0 / 1. */
jx_array *jx_nancumsum(jx_array *x, int axis);
jx_array *jx_nancumprod(jx_array *x, int axis);
/* jnp.amax / amin (aliases of jx_max / jx_min); jnp.ptp = max - min. */
jx_array *jx_amax(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_amin(jx_array *x, int naxes, const int *axes, bool keepdims);
jx_array *jx_ptp(jx_array *x, int naxes, const int *axes, bool keepdims);
/* jnp.count_nonzero: default int dtype (NaN counts as nonzero). */
jx_array *jx_count_nonzero(jx_array *x, int naxes, const int *axes, bool keepdims);
/* jnp.average(x, axis, weights, keepdims): weights NULL = mean; weights of x's shape,
 * or 1-d along the one reduced axis (JX_ERR_SHAPE otherwise); promoted to inexact. */
jx_array *jx_average(jx_array *x, jx_array *weights, int naxes, const int *axes,
                     bool keepdims);
/* jnp.cov(m, y, rowvar, bias, ddof, fweights, aweights): the covariance matrix of the
 * variables in the rows of m (columns when !rowvar), y's (optional, NULL) appended.
 * m, y: at most 2-d (JX_ERR_VALUE), promoted together to inexact. ddof NULL is None
 * (bias ? 0 : 1). fweights (1-d integer, JX_ERR_DTYPE otherwise) and aweights (1-d
 * real) of one entry per observation (JX_ERR_SHAPE otherwise), NULL for none; their
 * absolute values are used, as JAX (NumPy raises on negative weights). Result
 * (nvar, nvar), squeezed (one variable: 0-d); no variables: float (0, 0); no
 * observations: NaNs. Built as lax_numpy.cov: dot(X - mean, ((X - mean) w)^T) / f, f the
 * weighted count less ddof (matmul sums: within float32 rounding of JAX's). */
jx_array *jx_cov(jx_array *m, jx_array *y, bool rowvar, bool bias, const int64_t *ddof, jx_array *fweights,
                 jx_array *aweights);
/* jnp.corrcoef(x, y, rowvar): cov(x, y, rowvar) / outer(stddev, stddev) clipped to
 * [-1, 1] (one variable: c / c, so 1 or NaN). Errors as jx_cov. */
jx_array *jx_corrcoef(jx_array *x, jx_array *y, bool rowvar);
/* jnp.quantile / percentile(x, q, axis, method='linear') and jnp.median (midpoint): q
 * of rank <= 1 (JX_ERR_SHAPE), result q.shape + the reduced shape; a NaN in a slice
 * makes it NaN; axis JX_AXIS_NONE flattens; an empty axis is JX_ERR_VALUE. */
jx_array *jx_quantile(jx_array *x, jx_array *q, int axis, bool keepdims);
jx_array *jx_percentile(jx_array *x, jx_array *q, int axis, bool keepdims);
jx_array *jx_median(jx_array *x, int axis, bool keepdims);
/* jnp.quantile / percentile's method=: at position q * (n - 1) between the sorted
 * neighbours lo and hi, LINEAR interpolates (the default), LOWER / HIGHER take lo / hi,
 * MIDPOINT their mean, NEAREST lo when the position is at most half-way (JAX's rule:
 * ties go to lo, where NumPy rounds half to even). ("inverted_cdf" and weights: not yet.) */
typedef enum jx_quantile_method {
  JX_QUANTILE_LINEAR = 0,
  JX_QUANTILE_LOWER = 1,
  JX_QUANTILE_HIGHER = 2,
  JX_QUANTILE_MIDPOINT = 3,
  JX_QUANTILE_NEAREST = 4
} jx_quantile_method;
/* jx_quantile / jx_percentile with a method (JX_ERR_VALUE for an unknown one). */
jx_array *jx_quantile_with_method(jx_array *x, jx_array *q, int axis, jx_quantile_method method,
                                  bool keepdims);
jx_array *jx_percentile_with_method(jx_array *x, jx_array *q, int axis, jx_quantile_method method,
                                    bool keepdims);
/* jnp.diff(x, n, axis) (bool: not_equal; n < 0: JX_ERR_VALUE; 0-d: JX_ERR_SHAPE) and
 * jnp.ediff1d(x) (diff of the flattened x). */
jx_array *jx_diff(jx_array *x, int n, int axis);
jx_array *jx_ediff1d(jx_array *x);
/* jnp.trapezoid(y, x, dx, axis): x (NULL: spacing dx) 1-d along axis or y's shape. */
jx_array *jx_trapezoid(jx_array *y, jx_array *x, double dx, int axis);
/* jnp.isclose(a, b, rtol, atol, equal_nan) (JAX defaults 1e-5, 1e-8, false): bool,
 * a == b or (b finite and |a - b| <= atol + rtol |b|), ints promoted to floats first
 * (jax 0.10's promote_args_inexact: isclose(10, 11, rtol=0.1) is true). allclose =
 * all(isclose), a 0-d bool. */
jx_array *jx_isclose(jx_array *a, jx_array *b, double rtol, double atol, bool equal_nan);
jx_array *jx_allclose(jx_array *a, jx_array *b, double rtol, double atol, bool equal_nan);
/* jnp.array_equal (false for other shapes) / array_equiv (false unless they
 * broadcast): 0-d bool. */
jx_array *jx_array_equal(jx_array *a, jx_array *b, bool equal_nan);
jx_array *jx_array_equiv(jx_array *a, jx_array *b);
/* jnp.isposinf / isneginf: bool (all false for non-float x). */
jx_array *jx_isposinf(jx_array *x);
jx_array *jx_isneginf(jx_array *x);
/* jnp.degrees / radians (aliases), fabs (abs in an inexact dtype). */
jx_array *jx_degrees(jx_array *x);
jx_array *jx_radians(jx_array *x);
/* Complex numbers (src/lib/numpy/complex.c). jnp.real / imag: the parts of a complex
 * array (float32 of complex64, float64 of complex128; lax.real_p / imag_p); of a real
 * array, x itself / zeros like x. jnp.conj / conjugate: re - im*i (lax.conj_p); x itself
 * for real dtypes. Weak types are kept. */
jx_array *jx_conj(jx_array *x);
jx_array *jx_conjugate(jx_array *x);
jx_array *jx_real(jx_array *x);
jx_array *jx_imag(jx_array *x);
/* lax.complex(re, im): re + im*1j, elementwise after promotion and broadcasting (ints
 * -> float32 or for int64 float64, float16/bfloat16 -> float32): complex64 from float32 parts,
 * complex128 from float64. JX_ERR_DTYPE for complex parts, JX_ERR_SHAPE when the
 * shapes do not broadcast. Differentiable in both parts. */
jx_array *jx_complex(jx_array *re, jx_array *im);
/* jnp.angle(z, deg): atan2(imag(z), real(z)) in radians (degrees with deg), float of
 * the part's dtype; for real z, 0 or pi by sign (inexact dtype). */
jx_array *jx_angle(jx_array *z, bool deg);
/* jnp.iscomplex / isreal: bool, imag(x) != 0 / imag(x) == 0 elementwise (a real x: all
 * false / all true). */
jx_array *jx_iscomplex(jx_array *x);
jx_array *jx_isreal(jx_array *x);
/* jnp.sort_complex(a): a sorted along its last axis (complex: by real part, then
 * imaginary part, NaNs last), as a complex array (complex128 for float64/int64 input,
 * else complex64). */
jx_array *jx_sort_complex(jx_array *a);
jx_array *jx_fabs(jx_array *x);
/* jnp.sinc: sin(pi x) / (pi x), 1 at 0 (inexact). Weakly typed only for a weak scalar x
 * (JAX's constants are lax._const(x, ..): strong for an n-d x). */
jx_array *jx_sinc(jx_array *x);
/* jnp.heaviside(x1, x2): 0 below 0, x2 at 0, 1 above, NaN for NaN x1 (inexact,
 * broadcast). Weakly typed only when x1 is a weak scalar and x2 weak, as JAX's. */
jx_array *jx_heaviside(jx_array *x1, jx_array *x2);
/* jnp.float_power: power in the promoted inexact dtype. */
jx_array *jx_float_power(jx_array *x, jx_array *y);
/* jnp.logaddexp2: log2(2^x + 2^y), stable. Weakly typed only when x and y are weak
 * scalars, as JAX's. */
jx_array *jx_logaddexp2(jx_array *x, jx_array *y);
/* jnp.divmod: out[0] floor_divide, out[1] remainder (both NULL on error). */
jx_status jx_divmod(jx_array *x, jx_array *y, jx_array **out);
/* jnp.modf: out[0] = x - trunc(x), out[1] = trunc(x) (inexact). */
jx_status jx_modf(jx_array *x, jx_array **out);
/* jnp.nan_to_num(x, nan, posinf, neginf); NAN posinf/neginf mean the dtype's extremes
 * (JAX's None). Infinities are replaced after NaNs, as JAX (nan = inf gives posinf).
 * A complex x has each of its real and imaginary parts replaced so, as JAX's. A float
 * or complex result is strongly typed, as JAX's; other x is returned as is. */
jx_array *jx_nan_to_num(jx_array *x, double nan, double posinf, double neginf);
/* jnp.atleast_1d / 2d / 3d of one array (NumPy's placement of the new axes). */
jx_array *jx_atleast_1d(jx_array *x);
jx_array *jx_atleast_2d(jx_array *x);
jx_array *jx_atleast_3d(jx_array *x);
/* jnp.hstack / vstack / dstack / column_stack of n (1..4096) arrays. */
jx_array *jx_hstack(int n, jx_array *const *xs);
jx_array *jx_vstack(int n, jx_array *const *xs);
jx_array *jx_dstack(int n, jx_array *const *xs);
jx_array *jx_column_stack(int n, jx_array *const *xs);
/* jnp.flipud (axis 0) / fliplr (axis 1; rank >= 2 else JX_ERR_SHAPE). */
jx_array *jx_flipud(jx_array *x);
jx_array *jx_fliplr(jx_array *x);
/* jnp.rot90(x, k, axes=(a0, a1)); JAX's default axes (0, 1). Bad axes: JX_ERR_SHAPE. */
jx_array *jx_rot90(jx_array *x, int k, int a0, int a1);
/* jnp.append(arr, values, axis); JX_AXIS_NONE flattens both. */
jx_array *jx_append(jx_array *arr, jx_array *values, int axis);
/* jnp.resize(a, new_shape): a's elements repeated cyclically (zeros for an empty a);
 * negative dims: JX_ERR_VALUE. */
jx_array *jx_resize(jx_array *a, int ndim, const int64_t *shape);

/* ------------------------------------------------ more jax.numpy (src/lib/numpy/more.c) */
/* "No dtype" for parameters mirroring dtype=None. */
#define JX_DTYPE_DEFAULT ((jx_dtype)-1)
/* jnp.frexp(x): out[0] the mantissa (x's inexact dtype, magnitude in [0.5, 1)), out[1]
 * the exponent (int32): x = m * 2^e; 0, +-inf and NaN give (x, 0). Bit manipulation as
 * JAX's _frexp (subnormals handled). */
jx_status jx_frexp(jx_array *x, jx_array **out);
/* jnp.ldexp(x1, x2) = x1 * 2^x2 (JAX's frexp-based split, so a small x1 with a large x2
 * does not overflow early). x2 must have an integer dtype (JX_ERR_DTYPE). */
jx_array *jx_ldexp(jx_array *x1, jx_array *x2);
/* jnp.round(a, decimals): floats rounded half to even at 10^-decimals (scaled, rounded,
 * scaled back; float16 in float32; complex: each part), integers unchanged for decimals >= 0
 * (JX_ERR_UNSUPPORTED below, as JAX's NotImplementedError). decimals == 0 is jx_round. */
jx_array *jx_round_decimals(jx_array *x, int decimals);
/* lax.div / lax.rem: C's truncating division and remainder (sign of x) for integers
 * (x / 0 = -1, x % 0 = x, as XLA on CPU), IEEE division and fmod for floats. Operands
 * share a dtype (JX_ERR_DTYPE otherwise, as JAX), except that a weakly typed one of the
 * other's kind takes its dtype (jx_scalar_int(2) with int8: JAX requires an int8 2);
 * they broadcast and are not bool. */
jx_array *jx_lax_div(jx_array *x, jx_array *y);
jx_array *jx_lax_rem(jx_array *x, jx_array *y);
/* jnp.cumulative_sum / cumulative_prod(x, axis, dtype, include_initial): jx_cumsum /
 * jx_cumprod in dtype, with include_initial a leading 0 (1) along axis. Result dtypes as
 * JAX's: dtype JX_DTYPE_DEFAULT keeps x's, except that cumulative_sum promotes integers
 * narrower than the default int to it (int8 -> int32, uint16 -> uint32; int64/uint64
 * with x64) and bool accumulates as the default int; dtype JX_BOOL converts x to bool,
 * accumulates in the default int and returns bool. jnp.cumsum(x, axis, dtype) is
 * jx_cumulative_sum(x, axis, dtype, false) (flatten first for axis=None). axis
 * JX_AXIS_NONE only for 1-d x; 0-d x: JX_ERR_VALUE. */
jx_array *jx_cumulative_sum(jx_array *x, int axis, jx_dtype dtype, bool include_initial);
jx_array *jx_cumulative_prod(jx_array *x, int axis, jx_dtype dtype, bool include_initial);
/* jnp.digitize(x, bins, right): the index of each x's bin in the 1-d monotonic bins
 * (increasing or decreasing; int32). */
jx_array *jx_digitize(jx_array *x, jx_array *bins, bool right);
/* jnp.interp(x, xp, fp, left, right): piecewise-linear interpolation of (xp, fp) (1-d,
 * equal non-zero length; xp increasing) at x; left/right (NULL: fp[0] / fp[-1]) beyond
 * the ends. */
jx_array *jx_interp(jx_array *x, jx_array *xp, jx_array *fp, jx_array *left, jx_array *right);
/* jnp.histogram_bin_edges(a, bins, range): bins + 1 equal-width edges over range[0..1]
 * (NULL: [min(a), max(a)]; an empty range widens by 1/2 each side; a reversed range
 * gives decreasing edges, as JAX), computed as jnp.linspace computes them, in a's inexact
 * dtype (int32 a: float32). bins >= 0 (0: one edge; JX_ERR_VALUE below), a non-empty a
 * without a range (JAX: min of an empty array). */
jx_array *jx_histogram_bin_edges(jx_array *a, int64_t bins, const double *range);
/* jnp.histogram_bin_edges(a, bins) with bins an array of edges: bins (1-d, any length;
 * JX_ERR_SHAPE otherwise) converted to a's inexact dtype. */
jx_array *jx_histogram_bin_edges_array(jx_array *a, jx_array *bins);
/* jnp.histogram(a, bins, range, weights, density): out[0] the (weighted) counts per bin
 * (bins,), out[1] the edges (bins + 1,), both in the inexact dtype a and weights promote to
 * (float32 counts for int32 a). As JAX: a value v falls in bin i when edges[i] <= v <
 * edges[i+1], the last bin also holds v == edges[-1]; values outside the edges and NaNs
 * are not counted. weights (NULL: ones) has a's shape (JX_ERR_SHAPE). density divides by
 * the bin widths and the total. */
jx_status jx_histogram(jx_array *a, int64_t bins, const double *range, jx_array *weights, bool density,
                       jx_array **out);
/* jnp.histogram(a, bins=edges, ...) with explicit edges: bins is a 1-d array of at least one
 * edge (JX_ERR_SHAPE otherwise; JAX: IndexError / TypeError), converted to the promoted
 * dtype; len(bins) - 1 bins. Edges are not checked: JAX's searchsorted into non-monotonic
 * edges gives its answer, and jaxc's is the same (histogram(a, [0, 3, 1, 2])). */
jx_status jx_histogram_edges(jx_array *a, jx_array *bins, jx_array *weights, bool density, jx_array **out);
/* jnp.histogramdd(sample, bins, range, weights, density) of an (N, D) sample (1 <= D <=
 * JX_MAX_NDIM; JX_ERR_SHAPE otherwise). Per dimension i: the edges edges[i] (a 1-d array,
 * as jx_histogram_edges) when edges and edges[i] are non-NULL, else bins[i] (bins NULL:
 * 10) equal-width bins over range[2i .. 2i+1] (range NULL, or a NaN pair: the data's
 * min/max). out[0] the histogram (nbins_0, ..., nbins_{D-1}) -- the default int dtype
 * without weights, as JAX's bincount; the weights' promoted dtype with weights (N,);
 * sample's inexact dtype with density --, out[1 .. D] the edges. A value equal to the last
 * edge falls in the last bin; values outside and NaNs are not counted. */
jx_status jx_histogramdd(jx_array *sample, const int64_t *bins, jx_array *const *edges, const double *range,
                         jx_array *weights, bool density, jx_array **out);
/* jnp.histogram2d(x, y, bins, range, weights, density): jx_histogramdd of the sample
 * stack([x, y], axis=1) (x, y 1-d of one length, promoted together; JX_ERR_SHAPE
 * otherwise): bins (2 counts), edges (2 arrays), range (4 values) as there; out[0] the
 * histogram, out[1] x's edges, out[2] y's. */
jx_status jx_histogram2d(jx_array *x, jx_array *y, const int64_t *bins, jx_array *const *edges,
                         const double *range, jx_array *weights, bool density, jx_array **out);
/* jnp.bincount(x, weights, minlength, length): counts (weights' sums) of each value of the
 * 1-d integer or bool x in `length` bins (weights' dtype; the default int without weights,
 * NULL). As JAX's: negative values count in bin 0, values >= length are dropped. length
 * < 0 is JAX's None: max(minlength, max(x) + 1), read from the data (concrete x only;
 * JX_ERR_VALUE under a trace). JX_ERR_DTYPE for a float x or bool weights, JX_ERR_SHAPE
 * for x not 1-d or weights not of x's shape. */
jx_array *jx_bincount(jx_array *x, jx_array *weights, int64_t minlength, int64_t length);
/* jnp.select(condlist, choicelist, default): per element the choice of the first true
 * condition (n >= 1 of each; conditions converted to bool), default (NULL: JAX's 0, a
 * weak int) where none is; choices and default promote together, everything broadcasts. */
jx_array *jx_select(int n, jx_array *const *condlist, jx_array *const *choicelist, jx_array *default_);
/* jnp.pad(x, pad_width, mode, ...) for every mode of JAX but a callable one. pad_width
 * holds (before, after) per axis as in jx_pad (2*ndim non-negative entries; JX_ERR_VALUE
 * otherwise). Modes, as JAX's (and NumPy's) pad:
 *   CONSTANT     constant_values (before, after) per axis (NULL: 0), converted to x's dtype
 *   EDGE         the edge values repeated
 *   WRAP         the axis repeated periodically
 *   REFLECT      mirrored without the edge ([1 2 3] -> [3 2 | 1 2 3 | 2 1]); SYMMETRIC with it
 *                ([2 1 | 1 2 3 | 3 2]); longer pads reflect again; reflect_odd: JAX's
 *                reflect_type='odd' (2 * edge - mirror)
 *   LINEAR_RAMP  from end_values (before, after per axis; NULL: 0) to the edge value,
 *                linspace(end, edge, pad, endpoint=False) in x's inexact dtype (floored for ints)
 *   MAXIMUM / MINIMUM / MEAN / MEDIAN  the statistic of the axis, or of its first / last
 *                stat_length (before, after per axis; NULL: all; entries > 0) values;
 *                rounded half to even for integer x
 *   EMPTY        zeros (JAX's jnp.empty).
 * Axes are padded in order, each from the array padded along the earlier ones, as JAX.
 * An empty axis cannot be padded by EDGE, WRAP, REFLECT or SYMMETRIC (JX_ERR_VALUE),
 * nor by a statistic without an identity. A 0-d x is returned as is. Differentiable. */
typedef enum jx_pad_mode {
  JX_PAD_CONSTANT = 0,
  JX_PAD_EDGE,
  JX_PAD_WRAP,
  JX_PAD_REFLECT,
  JX_PAD_SYMMETRIC,
  JX_PAD_LINEAR_RAMP,
  JX_PAD_MAXIMUM,
  JX_PAD_MINIMUM,
  JX_PAD_MEAN,
  JX_PAD_MEDIAN,
  JX_PAD_EMPTY
} jx_pad_mode;
/* jnp.pad's keyword options (NULL options: all defaults). Arrays have 2*ndim entries. */
typedef struct jx_pad_options {
  const double *constant_values; /* CONSTANT */
  const double *end_values;      /* LINEAR_RAMP */
  const int64_t *stat_length;    /* MAXIMUM, MINIMUM, MEAN, MEDIAN */
  bool reflect_odd;              /* REFLECT, SYMMETRIC: reflect_type='odd' */
} jx_pad_options;
jx_array *jx_pad_with_mode(jx_array *x, const int64_t *pad_width, jx_pad_mode mode, const jx_pad_options *opts);
/* jnp.unwrap(p, discont, axis, period): adds multiples of period so that neighbours
 * along axis differ by at most discont (NAN: period / 2); JAX's default period 2 pi.
 * period stands for a Python scalar: an integral period keeps an integer p integer. */
jx_array *jx_unwrap(jx_array *p, double discont, int axis, double period);
/* jnp.polyval(p, x): sum p[i] x^(n-1-i) by Horner's rule (p, x promoted together);
 * strongly typed, as JAX's. */
jx_array *jx_polyval(jx_array *p, jx_array *x);
/* jnp.polymul(a1, a2): coefficients of the product polynomial (full convolution), in
 * the inexact promoted dtype. */
jx_array *jx_polymul(jx_array *a1, jx_array *a2);
/* jnp.polyfit(x, y, deg, rcond, full, w, cov): least-squares polynomial fit of degree
 * deg, coefficients highest power first, as JAX computes it (Vandermonde matrix with
 * rows weighted by w (NULL: none), columns scaled to unit norm, jx_linalg_lstsq with
 * rcond (NAN: None, len(x) * eps of x's inexact dtype), coefficients unscaled).
 * x (n,) non-empty; y (n,) or (n, k); w (n,). Fills out (5, 2 or 1 slots, only those):
 *   full:        out[0..4] = coefficients (order,) or (order, k), residuals (1,) or (k,),
 *                rank (int32), singular values (order,), rcond (weak float scalar);
 *   else cov:    out[0..1] = coefficients, covariance (order, order) or (order, order, k):
 *                inv(A^T A) / outer(scale, scale), times residuals / (n - order) for
 *                JX_POLYFIT_COV_SCALED (JAX's cov=True; needs n > order, JX_ERR_VALUE),
 *                unscaled for JX_POLYFIT_COV_UNSCALED (cov="unscaled");
 *   else:        out[0] = coefficients.
 * order = deg + 1. Errors: deg < 0 or a bad cov JX_ERR_VALUE; shapes JX_ERR_SHAPE (JAX's
 * TypeErrors); NULL x/y/out JX_ERR_VALUE. Unlike JAX (finfo of an int dtype fails) an
 * integer x with rcond NAN uses the eps of the float it promotes to (float32; int64: float64). Differentiable, jittable. */
typedef enum jx_polyfit_cov {
  JX_POLYFIT_COV_NONE = 0,
  JX_POLYFIT_COV_SCALED = 1,
  JX_POLYFIT_COV_UNSCALED = 2
} jx_polyfit_cov;
jx_status jx_polyfit(jx_array *x, jx_array *y, int deg, double rcond, bool full, jx_array *w,
                     jx_polyfit_cov cov, jx_array **out);

/* jnp.sum / prod / max / min(x, axis, keepdims=, where=, initial=): where (NULL: all)
 * broadcasts to x and masks elements out; initial (NULL: none; converted to the result
 * dtype) joins every reduction. max/min with where need initial (JX_ERR_VALUE, as JAX:
 * no identity); with initial an empty reduction gives initial. */
jx_array *jx_sum_where(jx_array *x, int naxes, const int *axes, bool keepdims, jx_array *where, jx_array *initial);
jx_array *jx_prod_where(jx_array *x, int naxes, const int *axes, bool keepdims, jx_array *where, jx_array *initial);
jx_array *jx_max_where(jx_array *x, int naxes, const int *axes, bool keepdims, jx_array *where, jx_array *initial);
jx_array *jx_min_where(jx_array *x, int naxes, const int *axes, bool keepdims, jx_array *where, jx_array *initial);
/* jnp.mean(x, axis, keepdims=, where=): the mean of the kept elements (NaN where none). */
jx_array *jx_mean_where(jx_array *x, int naxes, const int *axes, bool keepdims, jx_array *where);
/* jnp.take / take_along_axis with mode="fill" and fill_value (a Python scalar in JAX,
 * converted to x's dtype as JAX converts it: integers wrap -- uint8 -1 is 255, int8 300
 * is 44 -- and complex dtypes get fill_value + 0j): indices outside [-n, n) give
 * fill_value. The result is weakly typed iff x is. */
jx_array *jx_take_fill(jx_array *x, jx_array *indices, int axis, double fill_value);
jx_array *jx_take_along_axis_fill(jx_array *arr, jx_array *indices, int axis, double fill_value);

/* jnp.nonzero(a, size=size, fill_value=fill_value): out[0 .. ndim) the coordinates of
 * a's nonzero elements in C order (the default int dtype), truncated or padded to size
 * entries -- padding 0, or fill_value[d] per dimension (NULL: 0; an empty a pads with 0
 * whatever fill_value, as JAX's). size < 0: the exact
 * count, read from the data (concrete a only; JX_ERR_VALUE under a trace). 0-d a:
 * JX_ERR_VALUE (as JAX). */
jx_status jx_nonzero(jx_array *a, int64_t size, const int64_t *fill_value, jx_array **out);
/* jnp.flatnonzero(a, size, fill_value): nonzero of the flattened a (fill_value: one entry). */
jx_array *jx_flatnonzero(jx_array *a, int64_t size, const int64_t *fill_value);
/* jnp.argwhere(a, size, fill_value): (size, ndim) coordinates of the nonzero elements. */
jx_array *jx_argwhere(jx_array *a, int64_t size, const int64_t *fill_value);
/* jnp.partition(a, kth, axis): along axis the kth + 1 smallest ascending, then the rest
 * descending (JAX's top_k formulation); jnp.argpartition: their positions (int32).
 * Signed integer and float dtypes (JX_ERR_DTYPE for unsigned/bool); kth outside [-n, n):
 * JX_ERR_VALUE. */
jx_array *jx_partition(jx_array *a, int64_t kth, int axis);
jx_array *jx_argpartition(jx_array *a, int64_t kth, int axis);

#endif /* JAXC_NUMPY_H */
