/* sharding.c -- jax.sharding in C: meshes of devices with named axes, NamedSharding from
 * PartitionSpec text, and sharded arrays (each mesh device holds its block; the whole
 * value stays on the mesh's first device for ordinary operations). */
#include "trace/sharding.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"

/* ------------------------------------------------------------------ meshes */

static bool valid_identifier(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
  for (s++; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_')) return false;
  return true;
}

jx_mesh *jx_mesh_new(int ndim, const int64_t *shape, const char *const *axis_names,
                     const char *const *devices) {
  const char *fn = "jx_mesh_new";
  if (ndim < 1 || ndim > JX_MESH_MAX_AXES || !shape) {
    error_set(JX_ERR_SHAPE, "%s: a mesh has 1 to %d axes, got %d%s", fn, JX_MESH_MAX_AXES, ndim,
              shape ? "" : " (shape is NULL)");
    return NULL;
  }
  if (!axis_names) {
    error_set(JX_ERR_VALUE, "%s: axis_names is NULL", fn);
    return NULL;
  }
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 1 || shape[i] > BACKEND_MAX_CPU_DEVICES * 64) {
      error_set(JX_ERR_SHAPE, "%s: axis %d has size %lld (expected >= 1)", fn, i, (long long)shape[i]);
      return NULL;
    }
    n *= shape[i];
    if (!valid_identifier(axis_names[i])) {
      error_set(JX_ERR_VALUE, "%s: axis name %d \"%s\" is not an identifier", fn, i,
                axis_names[i] ? axis_names[i] : "(null)");
      return NULL;
    }
    for (int j = 0; j < i; j++)
      if (strcmp(axis_names[i], axis_names[j]) == 0) {
        error_set(JX_ERR_VALUE, "%s: axis name \"%s\" is used twice", fn, axis_names[i]);
        return NULL;
      }
  }
  if (n > BACKEND_MAX_CPU_DEVICES) {
    error_set(JX_ERR_SHAPE, "%s: a mesh of %lld devices (at most %d)", fn, (long long)n,
              BACKEND_MAX_CPU_DEVICES);
    return NULL;
  }
  if (!devices && n > backend_cpu_count()) {
    error_set(JX_ERR_SHAPE, "%s: a mesh of %lld devices, but the process has %d cpu devices "
              "(set JAXC_CPU_DEVICES or call jx_config_cpu_devices first)", fn, (long long)n,
              backend_cpu_count());
    return NULL;
  }
  jx_mesh *m = calloc(1, sizeof *m);
  if (!m) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  m->refcount = 1;
  m->ndim = ndim;
  m->size = n;
  for (int i = 0; i < ndim; i++) {
    m->shape[i] = shape[i];
    snprintf(m->names[i], sizeof m->names[i], "%s", axis_names[i]);
    if (strlen(axis_names[i]) >= sizeof m->names[i]) {
      error_set(JX_ERR_VALUE, "%s: axis name \"%s\" is longer than %zu characters", fn,
                axis_names[i], sizeof m->names[i] - 1);
      free(m);
      return NULL;
    }
  }
  for (int64_t i = 0; i < n; i++) {
    const Backend *be = devices ? backend_find(fn, devices[i]) : backend_cpu_device((int)i);
    if (!be) {
      free(m);
      return NULL;
    }
    for (int64_t j = 0; j < i; j++)
      if (m->devices[j] == be) {
        error_set(JX_ERR_VALUE, "%s: device %s is listed twice (at %lld and %lld)", fn, be->name,
                  (long long)j, (long long)i);
        free(m);
        return NULL;
      }
    m->devices[i] = be;
  }
  return m;
}

jx_mesh *jx_mesh_ref(jx_mesh *m) {
  if (m) __atomic_add_fetch(&m->refcount, 1, __ATOMIC_RELAXED);
  return m;
}

void jx_mesh_free(jx_mesh *m) {
  if (m && __atomic_sub_fetch(&m->refcount, 1, __ATOMIC_ACQ_REL) == 0) free(m);
}

int jx_mesh_ndim(const jx_mesh *m) { return m ? m->ndim : 0; }
int64_t jx_mesh_size(const jx_mesh *m) { return m ? m->size : 0; }

int mesh_axis_index(const jx_mesh *m, const char *name) {
  for (int i = 0; m && name && i < m->ndim; i++)
    if (strcmp(m->names[i], name) == 0) return i;
  return -1;
}

int64_t jx_mesh_axis_size(const jx_mesh *m, const char *axis_name) {
  int i = mesh_axis_index(m, axis_name);
  return i < 0 ? -1 : m->shape[i];
}

const char *jx_mesh_axis_name(const jx_mesh *m, int i) {
  return m && i >= 0 && i < m->ndim ? m->names[i] : NULL;
}

const char *jx_mesh_device(const jx_mesh *m, int64_t i) {
  return m && i >= 0 && i < m->size ? m->devices[i]->name : NULL;
}

void mesh_coords(const jx_mesh *m, int64_t flat, int64_t *coords) {
  for (int a = m->ndim - 1; a >= 0; a--) {
    coords[a] = flat % m->shape[a];
    flat /= m->shape[a];
  }
}

const char *mesh_axes_text(const jx_mesh *m, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < m->ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s'%s'", i ? ", " : "", m->names[i]);
  return buf;
}

/* -------------------------------------------------------------- shardings */

static void skip_space(const char **p) {
  while (isspace((unsigned char)**p)) (*p)++;
}

/* Reads an identifier into name (false if none). */
static bool read_name(const char **p, char *name, size_t n) {
  skip_space(p);
  const char *s = *p;
  if (!(isalpha((unsigned char)*s) || *s == '_')) return false;
  size_t len = 0;
  while (isalnum((unsigned char)s[len]) || s[len] == '_') len++;
  if (len >= n) return false;
  memcpy(name, s, len);
  name[len] = 0;
  *p = s + len;
  return true;
}

static bool spec_add_axis(const char *fn, jx_sharding *s, int dim, const char *name, const char *text) {
  int a = mesh_axis_index(s->mesh, name);
  if (a < 0) {
    char axes[JX_MESH_MAX_AXES * 40];
    error_set(JX_ERR_VALUE, "%s: PartitionSpec \"%s\" names axis '%s', which the mesh does not "
              "have (its axes: %s)", fn, text, name, mesh_axes_text(s->mesh, axes, sizeof axes));
    return false;
  }
  for (int d = 0; d <= dim; d++)
    for (int k = 0; k < s->naxes[d]; k++)
      if (s->axes[d][k] == a) {
        error_set(JX_ERR_VALUE, "%s: PartitionSpec \"%s\" uses mesh axis '%s' twice (JAX's "
                  "DuplicateSpecError)", fn, text, name);
        return false;
      }
  s->axes[dim][s->naxes[dim]++] = a;
  return true;
}

/* Parses "x, None, (a, b)" into s->nspec entries. */
static bool parse_spec(const char *fn, jx_sharding *s, const char *text) {
  const char *p = text;
  skip_space(&p);
  if (!*p) return true; /* P() */
  for (;;) {
    if (s->nspec == JX_MAX_NDIM) {
      error_set(JX_ERR_VALUE, "%s: PartitionSpec \"%s\" has more than %d entries", fn, text, JX_MAX_NDIM);
      return false;
    }
    int dim = s->nspec++;
    char name[MESH_NAME_MAX];
    skip_space(&p);
    if (*p == '(') {
      p++;
      skip_space(&p);
      if (*p != ')')
        for (;;) {
          if (!read_name(&p, name, sizeof name)) goto malformed;
          if (!spec_add_axis(fn, s, dim, name, text)) return false;
          skip_space(&p);
          if (*p == ')') break;
          if (*p++ != ',') goto malformed;
        }
      p++;
    } else {
      if (!read_name(&p, name, sizeof name)) goto malformed;
      if (strcmp(name, "None") != 0 && !spec_add_axis(fn, s, dim, name, text)) return false;
    }
    skip_space(&p);
    if (!*p) return true;
    if (*p++ != ',') goto malformed;
  }
malformed:
  error_set(JX_ERR_VALUE, "%s: malformed PartitionSpec \"%s\" (expected entries like x, None "
            "or (x, y) separated by commas)", fn, text);
  return false;
}

static void spec_print(jx_sharding *s) {
  size_t len = 0, n = sizeof s->text;
  len += (size_t)snprintf(s->text, n, "P(");
  for (int d = 0; d < s->nspec && len < n; d++) {
    if (d) len += (size_t)snprintf(s->text + len, n - len, ", ");
    if (s->naxes[d] == 0) len += (size_t)snprintf(s->text + len, n - len, "None");
    else if (s->naxes[d] == 1)
      len += (size_t)snprintf(s->text + len, n - len, "'%s'", s->mesh->names[s->axes[d][0]]);
    else
      for (int k = 0; k < s->naxes[d] && len < n; k++)
        len += (size_t)snprintf(s->text + len, n - len, "%s'%s'%s", k ? ", " : "(",
                                s->mesh->names[s->axes[d][k]], k + 1 == s->naxes[d] ? ")" : "");
  }
  if (len < n) snprintf(s->text + len, n - len, s->nspec == 1 ? ",)" : ")");
}

jx_sharding *jx_named_sharding(jx_mesh *mesh, const char *spec) {
  const char *fn = "jx_named_sharding";
  if (!mesh || !spec) {
    error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, mesh ? "spec" : "mesh");
    return NULL;
  }
  jx_sharding *s = calloc(1, sizeof *s);
  if (!s) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  s->refcount = 1;
  s->mesh = jx_mesh_ref(mesh);
  if (!parse_spec(fn, s, spec)) {
    jx_sharding_free(s);
    return NULL;
  }
  spec_print(s);
  return s;
}

jx_sharding *sharding_prepend_none(const jx_sharding *s) {
  if (s->nspec + 1 > JX_MAX_NDIM) {
    error_set(JX_ERR_SHAPE, "shard_map: a PartitionSpec of %d entries cannot gain a batch dimension",
              s->nspec);
    return NULL;
  }
  jx_sharding *r = calloc(1, sizeof *r);
  if (!r) {
    error_set(JX_ERR_OOM, "shard_map: out of memory");
    return NULL;
  }
  *r = *s;
  r->refcount = 1;
  jx_mesh_ref(r->mesh);
  r->nspec = s->nspec + 1;
  r->naxes[0] = 0;
  memcpy(r->naxes + 1, s->naxes, (size_t)s->nspec * sizeof *s->naxes);
  memcpy(r->axes + 1, s->axes, (size_t)s->nspec * sizeof *s->axes);
  spec_print(r);
  return r;
}

jx_sharding *jx_sharding_ref(jx_sharding *s) {
  if (s) __atomic_add_fetch(&s->refcount, 1, __ATOMIC_RELAXED);
  return s;
}

void jx_sharding_free(jx_sharding *s) {
  if (!s || __atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
  jx_mesh_free(s->mesh);
  free(s);
}

jx_mesh *jx_sharding_mesh(const jx_sharding *s) { return s ? s->mesh : NULL; }
const char *jx_sharding_spec(const jx_sharding *s) { return s ? s->text : NULL; }

int64_t sharding_pieces(const jx_sharding *s, int dim) {
  int64_t n = 1;
  for (int k = 0; dim < s->nspec && k < s->naxes[dim]; k++) n *= s->mesh->shape[s->axes[dim][k]];
  return n;
}

bool sharding_check(const char *fn, const jx_sharding *s, int ndim, const int64_t *shape) {
  if (s->nspec > ndim) {
    error_set(JX_ERR_SHAPE, "%s: %s has %d entries, more than the array's %d dimensions", fn,
              s->text, s->nspec, ndim);
    return false;
  }
  for (int d = 0; d < s->nspec; d++) {
    int64_t n = sharding_pieces(s, d);
    if (shape[d] % n != 0) {
      error_set(JX_ERR_SHAPE, "%s: %s splits dimension %d into %lld shards, but its size %lld "
                "is not divisible by %lld", fn, s->text, d, (long long)n, (long long)shape[d],
                (long long)n);
      return false;
    }
  }
  return true;
}

void sharding_block(const jx_sharding *s, int64_t dev, int ndim, const int64_t *shape,
                    int64_t *start, int64_t *stop) {
  int64_t coords[JX_MESH_MAX_AXES];
  mesh_coords(s->mesh, dev, coords);
  for (int d = 0; d < ndim; d++) {
    int64_t n = sharding_pieces(s, d), piece = 0;
    for (int k = 0; d < s->nspec && k < s->naxes[d]; k++) {
      int a = s->axes[d][k];
      piece = piece * s->mesh->shape[a] + coords[a];
    }
    int64_t len = shape[d] / n;
    start[d] = piece * len;
    stop[d] = start[d] + len;
  }
}

bool sharding_is_primary(const jx_sharding *s, int64_t dev) {
  int64_t coords[JX_MESH_MAX_AXES];
  mesh_coords(s->mesh, dev, coords);
  bool used[JX_MESH_MAX_AXES] = {false};
  for (int d = 0; d < s->nspec; d++)
    for (int k = 0; k < s->naxes[d]; k++) used[s->axes[d][k]] = true;
  for (int a = 0; a < s->mesh->ndim; a++)
    if (!used[a] && coords[a] != 0) return false;
  return true;
}

bool sharding_equal(const jx_sharding *a, const jx_sharding *b) {
  if (a == b) return true;
  if (!a || !b || a->mesh != b->mesh) return false;
  int n = a->nspec > b->nspec ? a->nspec : b->nspec;
  for (int d = 0; d < n; d++) {
    int na = d < a->nspec ? a->naxes[d] : 0, nb = d < b->nspec ? b->naxes[d] : 0;
    if (na != nb) return false;
    for (int k = 0; k < na; k++)
      if (a->axes[d][k] != b->axes[d][k]) return false;
  }
  return true;
}

/* ---------------------------------------------------------- sharded arrays */

typedef struct Shards {
  ArrayShards head;
  jx_sharding *sharding;
  int n;
  jx_array *shard[]; /* held with array_retain */
} Shards;

static void shards_release(ArrayShards *h) {
  Shards *s = (Shards *)h;
  for (int i = 0; i < s->n; i++) array_drop(s->shard[i]);
  jx_sharding_free(s->sharding);
  free(s);
}

/* Copies the block `src` (shape local, C order) into the whole array dst (shape, C order)
 * at offset start. */
static void copy_block(char *dst, const char *src, int ndim, const int64_t *shape,
                       const int64_t *local, const int64_t *start, size_t item) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < ndim; d++) rows *= local[d];
  size_t run = (size_t)(ndim ? local[ndim - 1] : 1) * item;
  int64_t idx[JX_MAX_NDIM] = {0};
  for (int64_t r = 0; r < rows; r++) {
    int64_t off = 0;
    for (int d = 0; d < ndim; d++) off = off * shape[d] + start[d] + (d + 1 < ndim ? idx[d] : 0);
    memcpy(dst + (size_t)off * item, src + (size_t)r * run, run);
    for (int d = ndim - 2; d >= 0; d--) {
      if (++idx[d] < local[d]) break;
      idx[d] = 0;
    }
  }
}

jx_array *sharding_assemble(const char *fn, jx_sharding *s, jx_array *const *shards, int ndim,
                            const int64_t *shape) {
  const jx_mesh *m = s->mesh;
  jx_dtype dt = shards[0]->dtype;
  size_t item = jx_dtype_itemsize(dt);
  int64_t numel = shape_numel(ndim, shape);
  char *whole = malloc((size_t)numel * item + 1);
  Shards *sh = calloc(1, sizeof *sh + (size_t)m->size * sizeof(jx_array *));
  char *tmp = NULL;
  jx_array *out = NULL;
  if (!whole || !sh) {
    error_set(JX_ERR_OOM, "%s: out of memory gathering %lld elements", fn, (long long)numel);
    goto done;
  }
  for (int64_t i = 0; i < m->size; i++) {
    if (!sharding_is_primary(s, i)) continue;
    int64_t start[JX_MAX_NDIM], stop[JX_MAX_NDIM], local[JX_MAX_NDIM];
    sharding_block(s, i, ndim, shape, start, stop);
    for (int d = 0; d < ndim; d++) local[d] = stop[d] - start[d];
    size_t nb = (size_t)shape_numel(ndim, local) * item;
    free(tmp);
    tmp = malloc(nb + 1);
    if (!tmp) {
      error_set(JX_ERR_OOM, "%s: out of memory gathering shard %lld", fn, (long long)i);
      goto done;
    }
    if (jx_read(shards[i], tmp, nb) != JX_OK) goto done;
    copy_block(whole, tmp, ndim, shape, local, start, item);
  }
  {
    /* the whole value on the mesh's first device, committed there */
    const Backend *be = m->devices[0];
    Buffer *buf = buffer_new(be, (size_t)numel * item);
    if (!buf) goto done;
    if (be->copy_in(be, buf->mem, whole, (size_t)numel * item) != JX_OK) {
      buffer_free(buf);
      error_set(JX_ERR_DEVICE, "%s: copying to device %s failed", fn, be->name);
      goto done;
    }
    out = array_new(buf, shape_contiguous(ndim, shape), dt, shards[0]->weak);
    if (!out) goto done;
    out->committed = true;
    sh->head.release = shards_release;
    sh->sharding = jx_sharding_ref(s);
    sh->n = (int)m->size;
    for (int64_t i = 0; i < m->size; i++) sh->shard[i] = array_retain(shards[i]);
    out->shards = &sh->head;
    sh = NULL;
  }
done:
  free(sh);
  free(whole);
  free(tmp);
  return out;
}

jx_status sharding_split(const char *fn, jx_array *a, jx_sharding *s, jx_array **shards) {
  const jx_mesh *m = s->mesh;
  for (int64_t i = 0; i < m->size; i++) shards[i] = NULL;
  /* a sharded array with this very layout: its shards as they are */
  if (a->shards && sharding_equal(((Shards *)a->shards)->sharding, s)) {
    for (int64_t i = 0; i < m->size; i++) shards[i] = jx_ref(((Shards *)a->shards)->shard[i]);
    return JX_OK;
  }
  for (int64_t i = 0; i < m->size; i++) {
    int64_t start[JX_MAX_NDIM], stop[JX_MAX_NDIM], step[JX_MAX_NDIM];
    sharding_block(s, i, a->ndim, a->shape, start, stop);
    for (int d = 0; d < a->ndim; d++) step[d] = 1;
    jx_scope_begin();
    jx_array *piece = prim_slice(a, start, stop, step);
    jx_array *put = piece ? jx_device_put(piece, m->devices[i]->name) : NULL;
    jx_scope_end(put ? 1 : 0, &put);
    if (!put) {
      for (int64_t j = 0; j < i; j++) jx_free(shards[j]), shards[j] = NULL;
      if (!error_pending()) error_set(JX_ERR_INTERNAL, "%s: placing shard %lld failed", fn, (long long)i);
      return jx_last_status();
    }
    shards[i] = put;
  }
  return JX_OK;
}

jx_array *jx_device_put_sharded(jx_array *a, jx_sharding *s) {
  const char *fn = "jx_device_put_sharded";
  if (!a || !s) {
    if (!error_pending()) error_set(JX_ERR_VALUE, "%s: %s is NULL", fn, a ? "sharding" : "array");
    return NULL;
  }
  if (a->tracer) {
    error_set(JX_ERR_VALUE, "%s: a tracer inside a transformation cannot be placed on devices "
              "(use jx_shard_map inside transformations)", fn);
    return NULL;
  }
  if (!sharding_check(fn, s, a->ndim, a->shape)) return NULL;
  if (a->shards && sharding_equal(((Shards *)a->shards)->sharding, s)) return jx_ref(a);
  jx_array **shards = calloc((size_t)s->mesh->size, sizeof *shards);
  if (!shards) {
    error_set(JX_ERR_OOM, "%s: out of memory", fn);
    return NULL;
  }
  jx_array *out = NULL;
  if (sharding_split(fn, a, s, shards) == JX_OK) {
    out = sharding_assemble(fn, s, shards, a->ndim, a->shape);
    for (int64_t i = 0; i < s->mesh->size; i++) jx_free(shards[i]);
  }
  free(shards);
  return out;
}

jx_sharding *jx_sharding_of(const jx_array *a) {
  return a && a->shards ? ((Shards *)a->shards)->sharding : NULL;
}

int jx_num_shards(const jx_array *a) {
  return !a ? 0 : a->shards ? ((Shards *)a->shards)->n : 1;
}

jx_array *sharding_shard(const jx_array *a, int i) {
  return a->shards && i >= 0 && i < ((Shards *)a->shards)->n ? ((Shards *)a->shards)->shard[i] : NULL;
}

jx_array *jx_shard(jx_array *a, int i) {
  if (!a) {
    if (jx_last_status() == JX_OK) error_set(JX_ERR_VALUE, "jx_shard: a is NULL");
    return NULL;
  }
  int n = jx_num_shards(a);
  if (i < 0 || i >= n) {
    error_set(JX_ERR_VALUE, "jx_shard: shard %d of an array with %d shards", i, n);
    return NULL;
  }
  return jx_ref(a->shards ? ((Shards *)a->shards)->shard[i] : a);
}
