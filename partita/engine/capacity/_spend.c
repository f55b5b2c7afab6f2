/* The meter's request path over this process's leases: a request, or a batch's writes to one table.
 *
 * Why C: with --emulate-throughput every request, and every item of a
 * batch, is charged to its partition's lease and to the table's, and
 * sampled for the hot-key ranking. In Python a BatchWriteItem's loop (and
 * the write units it needs) cost about 18 us of a 25-item batch, most of
 * what the emulation cost it, and each request's few lines allocate a float
 * per token count they write (docs/decisions.md, "Cost of the emulation,
 * sixth pass"). The rules are spend.py's: `py_one` and `py_writes` there are
 * the same functions in Python (used when this module is not built;
 * tests/test_capacity_spend.py holds the two to the same answers). This
 * file only reads a Resource's lookup table and debits its state array.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The layout of Resource.state and the unit rules, set once by spend.py (`layout`). */
static Py_ssize_t hash_offset = -1, level_at, debt_at, parts_at, dim_write;
static long long unit_bytes = 1;
static double sample_units;
static long ambiguous;

static PyObject *s_table, *s_row, *s_key, *s_new_size, *s_old_size, *s_state, *s_lookup, *s_shift, *s_exact, *s_number;

enum { DONE = 0, SHORT = 1, SAMPLE = 2 };

/* one()'s two common answers, made once: paid with nothing to rank, and not paid. */
static PyObject *paid, *unpaid;

/* A Resource's arrays, borrowed for one call. */
typedef struct {
    Py_buffer state_view, lookup_view;
    double *state;
    Py_ssize_t slots;
    const unsigned short *lookup;
    Py_ssize_t slices;
    long shift;
    int exact;
} Arrays;

static int
get_buffer(PyObject *owner, PyObject *name, Py_buffer *view, int flags, Py_ssize_t itemsize, const char *format)
{
    PyObject *obj = PyObject_GetAttr(owner, name);
    if (obj == NULL)
        return -1;
    int failed = PyObject_GetBuffer(obj, view, flags | PyBUF_FORMAT);
    Py_DECREF(obj); /* the buffer holds its own reference */
    if (failed < 0)
        return -1;
    if (view->itemsize != itemsize || view->format == NULL || strcmp(view->format, format) != 0) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_TypeError, "expected an array('%s')", format);
        return -1;
    }
    return 0;
}

static int
open_arrays(PyObject *res, Arrays *arrays)
{
    if (hash_offset < 0) {
        PyErr_SetString(PyExc_RuntimeError, "layout() was not called");
        return -1;
    }
    PyObject *value = PyObject_GetAttr(res, s_shift);
    if (value == NULL)
        return -1;
    arrays->shift = PyLong_AsLong(value);
    Py_DECREF(value);
    if (arrays->shift == -1 && PyErr_Occurred())
        return -1;
    if (arrays->shift < 0 || arrays->shift > 16) {
        PyErr_SetString(PyExc_ValueError, "shift out of range");
        return -1;
    }
    if ((value = PyObject_GetAttr(res, s_exact)) == NULL)
        return -1;
    arrays->exact = PyObject_IsTrue(value);
    Py_DECREF(value);
    if (arrays->exact < 0)
        return -1;
    if (get_buffer(res, s_state, &arrays->state_view, PyBUF_WRITABLE, sizeof(double), "d") < 0)
        return -1;
    if (get_buffer(res, s_lookup, &arrays->lookup_view, PyBUF_SIMPLE, sizeof(unsigned short), "H") < 0) {
        PyBuffer_Release(&arrays->state_view);
        return -1;
    }
    arrays->state = arrays->state_view.buf;
    arrays->slots = arrays->state_view.len / (Py_ssize_t)sizeof(double);
    arrays->lookup = arrays->lookup_view.buf;
    arrays->slices = arrays->lookup_view.len / (Py_ssize_t)sizeof(unsigned short);
    if (level_at + 1 >= arrays->slots || debt_at + 1 >= arrays->slots) { /* both dimensions' */
        PyErr_SetString(PyExc_IndexError, "state too short");
        PyBuffer_Release(&arrays->lookup_view);
        PyBuffer_Release(&arrays->state_view);
        return -1;
    }
    return 0;
}

static void
close_arrays(Arrays *arrays)
{
    PyBuffer_Release(&arrays->lookup_view);
    PyBuffer_Release(&arrays->state_view);
}

/* Where `row`'s lease tokens of dimension `dim` are in the state array; -1 with an exception set. */
static Py_ssize_t
tokens_at(PyObject *res, Arrays *arrays, PyObject *row, Py_ssize_t dim)
{
    if (!PyBytes_Check(row) || PyBytes_GET_SIZE(row) < hash_offset + 2) {
        PyErr_SetString(PyExc_IndexError, "row key without its hash");
        return -1;
    }
    const unsigned char *bytes = (const unsigned char *)PyBytes_AS_STRING(row);
    Py_ssize_t slice = ((Py_ssize_t)bytes[hash_offset] << 8 | bytes[hash_offset + 1]) >> arrays->shift;
    if (slice >= arrays->slices) {
        PyErr_SetString(PyExc_IndexError, "array index out of range");
        return -1;
    }
    long partition = arrays->lookup[slice];
    if (partition == ambiguous) { /* a boundary cuts this slice: Resource.number bisects */
        PyObject *found = PyObject_CallMethodOneArg(res, s_number, row);
        if (found == NULL)
            return -1;
        partition = PyLong_AsLong(found);
        Py_DECREF(found);
        if (partition == -1 && PyErr_Occurred())
            return -1;
    }
    Py_ssize_t at = parts_at + ((Py_ssize_t)partition << 1) + dim;
    if (partition < 0 || at >= arrays->slots) {
        PyErr_SetString(PyExc_IndexError, "array index out of range");
        return -1;
    }
    return at;
}

static int
read_size(PyObject *action, PyObject *name, long long *out)
{
    PyObject *value = PyObject_GetAttr(action, name);
    if (value == NULL)
        return -1;
    *out = PyLong_AsLongLong(value);
    Py_DECREF(value);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* spend.py's `sample`: the units to rank a paid request with now (0.0: none yet), `owed` its debt. */
static double
sample(double *owed, double units, int exact)
{
    if (exact)
        return units;
    *owed += units;
    if (*owed < sample_units)
        return 0.0;
    double due = *owed;
    *owed = 0.0;
    return due;
}

PyDoc_STRVAR(layout_doc,
"layout(hash_offset, level_at, debt_at, parts_at, write, unit_bytes, sample_units, ambiguous)\n\n"
"Where a row key's hash is, the layout of Resource.state, the write dimension, the bytes of\n"
"a write unit, the units between hot-key samples and the lookup's AMBIGUOUS marker.");

static PyObject *
spend_layout(PyObject *Py_UNUSED(module), PyObject *args)
{
    long long bytes;
    if (!PyArg_ParseTuple(args, "nnnnnLdl", &hash_offset, &level_at, &debt_at, &parts_at, &dim_write, &bytes,
                          &sample_units, &ambiguous))
        return NULL;
    if (bytes < 1 || dim_write < 0 || dim_write > 1) {
        PyErr_SetString(PyExc_ValueError, "bad layout");
        hash_offset = -1;
        return NULL;
    }
    unit_bytes = bytes;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(one_doc, "one(res, dim, row, units, key) -> float\n\nSee spend.py's py_one.");

static PyObject *
spend_one(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "one() takes 5 arguments");
        return NULL;
    }
    PyObject *res = args[0], *row = args[2], *key = args[4];
    long dim = PyLong_AsLong(args[1]);
    if (dim == -1 && PyErr_Occurred())
        return NULL;
    if (dim < 0 || dim > 1) {
        PyErr_SetString(PyExc_ValueError, "dimension out of range");
        return NULL;
    }
    double units = PyFloat_AsDouble(args[3]);
    if (units == -1.0 && PyErr_Occurred())
        return NULL;
    Arrays arrays;
    if (open_arrays(res, &arrays) < 0)
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t at = tokens_at(res, &arrays, row, dim);
    if (at < 0)
        goto done;
    double *state = arrays.state;
    double left = state[at];
    if (left < units || state[level_at + dim] < units) {
        result = Py_NewRef(unpaid);
        goto done;
    }
    state[at] = left - units;
    state[level_at + dim] -= units;
    double due = key == Py_None ? 0.0 : sample(&state[debt_at + dim], units, arrays.exact);
    result = due == 0.0 ? Py_NewRef(paid) : PyFloat_FromDouble(due);
done:
    close_arrays(&arrays);
    return result;
}

PyDoc_STRVAR(writes_doc,
"writes(res, table, actions, resolved, position) -> (status, position, units)\n\n"
"See spend.py's py_writes.");

static PyObject *
spend_writes(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "writes() takes 5 arguments");
        return NULL;
    }
    PyObject *res = args[0], *table = args[1], *actions = args[2], *resolved = args[3];
    if (!PyList_Check(actions) || !PyList_Check(resolved)) {
        PyErr_SetString(PyExc_TypeError, "actions and resolved must be lists");
        return NULL;
    }
    Py_ssize_t position = PyLong_AsSsize_t(args[4]);
    if (position == -1 && PyErr_Occurred())
        return NULL;
    if (position < 0) {
        PyErr_SetString(PyExc_ValueError, "negative position");
        return NULL;
    }
    Arrays arrays;
    if (open_arrays(res, &arrays) < 0)
        return NULL;
    double *state = arrays.state;
    const Py_ssize_t dim = dim_write;
    double level = state[level_at + dim], owed = state[debt_at + dim], units = 0.0;
    int status = DONE;
    PyObject *result = NULL;
    for (;;) {
        /* The lists could change size only through Resource.number; read the count each time. */
        if (position >= PyList_GET_SIZE(actions))
            break;
        PyObject *action = PyList_GET_ITEM(actions, position);
        PyObject *owner = PyObject_GetAttr(action, s_table);
        if (owner == NULL)
            goto done;
        Py_DECREF(owner); /* compared by identity only; the action holds it */
        if (owner != table)
            break;
        if (position >= PyList_GET_SIZE(resolved)) {
            PyErr_SetString(PyExc_IndexError, "list index out of range");
            goto done;
        }
        PyObject *pair = PyList_GET_ITEM(resolved, position);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "resolved: expected (old, new) pairs");
            goto done;
        }
        long long size = 0, old_size;
        if (PyTuple_GET_ITEM(pair, 1) != Py_None && read_size(action, s_new_size, &size) < 0)
            goto done;
        if (PyTuple_GET_ITEM(pair, 0) != Py_None) {
            if (read_size(action, s_old_size, &old_size) < 0)
                goto done;
            if (old_size > size)
                size = old_size;
        }
        /* Python's -(-size // unit_bytes), also for negative sizes (C division truncates). */
        long long whole = size / unit_bytes;
        if (whole * unit_bytes != size && size > 0)
            whole += 1;
        double need = whole > 1 ? (double)whole : 1.0;
        PyObject *row = PyObject_GetAttr(action, s_row);
        if (row == NULL)
            goto done;
        Py_ssize_t at = tokens_at(res, &arrays, row, dim);
        Py_DECREF(row);
        if (at < 0)
            goto done;
        double left = state[at];
        if (left < need || level < need) {
            status = SHORT;
            units = need;
            break;
        }
        state[at] = left - need;
        level -= need;
        position += 1;
        PyObject *key = PyObject_GetAttr(action, s_key);
        if (key == NULL)
            goto done;
        Py_DECREF(key);
        if (key != Py_None && (units = sample(&owed, need, arrays.exact)) != 0.0) {
            status = SAMPLE;
            break;
        }
    }
    result = Py_BuildValue("(ind)", status, position, units);
done: /* on an error too, what was debited stays debited, as in py_writes */
    state[level_at + dim] = level;
    state[debt_at + dim] = owed;
    close_arrays(&arrays);
    return result;
}

static PyMethodDef spend_methods[] = {
    {"layout", (PyCFunction)spend_layout, METH_VARARGS, layout_doc},
    {"one", (PyCFunction)(void (*)(void))spend_one, METH_FASTCALL, one_doc},
    {"writes", (PyCFunction)(void (*)(void))spend_writes, METH_FASTCALL, writes_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef spend_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "partita.engine.capacity._spend",
    .m_doc = "The meter's request path over its leases: a request, or a batch's writes (see spend.py).",
    .m_size = 0,
    .m_methods = spend_methods,
};

PyMODINIT_FUNC
PyInit__spend(void)
{
    if ((s_table = PyUnicode_InternFromString("table")) == NULL
        || (s_row = PyUnicode_InternFromString("row")) == NULL
        || (s_key = PyUnicode_InternFromString("key")) == NULL
        || (s_new_size = PyUnicode_InternFromString("new_size")) == NULL
        || (s_old_size = PyUnicode_InternFromString("old_size")) == NULL
        || (s_state = PyUnicode_InternFromString("state")) == NULL
        || (s_lookup = PyUnicode_InternFromString("lookup")) == NULL
        || (s_shift = PyUnicode_InternFromString("shift")) == NULL
        || (s_exact = PyUnicode_InternFromString("exact")) == NULL
        || (s_number = PyUnicode_InternFromString("number")) == NULL
        || (paid = PyFloat_FromDouble(0.0)) == NULL || (unpaid = PyFloat_FromDouble(-1.0)) == NULL)
        return NULL;
    return PyModule_Create(&spend_module);
}
