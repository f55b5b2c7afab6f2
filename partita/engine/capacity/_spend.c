/* A BatchWriteItem's writes to one table, spent from this process's leases in one call.
 *
 * Why C: with --emulate-throughput every item of a batch is charged to its
 * partition's lease and to the table's, and sampled for the hot-key
 * ranking. In Python that loop (and the write units it needs) cost about
 * 18 us of a 25-item batch, most of what the emulation cost BatchWriteItem
 * (docs/decisions.md, "Cost of the emulation, sixth pass"). The rules are
 * not here but in spend.py, whose `py_spend` is the same function in Python
 * (used when this module is not built; tests/test_capacity_spend.py holds the
 * two to the same answers). This file only reads the requests' attributes,
 * finds each row's partition in the resource's lookup table and debits the
 * resource's state array, exactly as `py_spend` does.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The layout of Resource.state and the unit rules, set once by spend.py (`layout`). */
static Py_ssize_t hash_offset = -1, level_at, debt_at, parts_at, dim;
static long long unit_bytes = 1;
static double sample_units;
static long ambiguous;

static PyObject *s_table, *s_row, *s_key, *s_new_size, *s_old_size;

enum { DONE = 0, SHORT = 1, SAMPLE = 2 };

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

static int
get_buffer(PyObject *obj, Py_buffer *view, int flags, Py_ssize_t itemsize, const char *format)
{
    if (PyObject_GetBuffer(obj, view, flags | PyBUF_FORMAT) < 0)
        return -1;
    if (view->itemsize != itemsize || view->format == NULL || strcmp(view->format, format) != 0) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_TypeError, "expected an array('%s')", format);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(layout_doc,
"layout(hash_offset, level_at, debt_at, parts_at, dim, unit_bytes, sample_units, ambiguous)\n\n"
"Where a row key's hash is, the layout of Resource.state, the write dimension, the bytes of\n"
"a write unit, the units between hot-key samples and the lookup's AMBIGUOUS marker.");

static PyObject *
spend_layout(PyObject *self, PyObject *args)
{
    long long bytes;
    if (!PyArg_ParseTuple(args, "nnnnnLdl", &hash_offset, &level_at, &debt_at, &parts_at, &dim, &bytes,
                          &sample_units, &ambiguous))
        return NULL;
    if (bytes < 1) {
        PyErr_SetString(PyExc_ValueError, "unit_bytes must be positive");
        return NULL;
    }
    unit_bytes = bytes;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(writes_doc,
"writes(state, lookup, shift, table, actions, resolved, position, exact, number)"
" -> (status, position, units)\n\n"
"See spend.py's py_spend: the same arguments and the same answer.");

static PyObject *
spend_writes(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "writes() takes 9 arguments");
        return NULL;
    }
    if (hash_offset < 0) {
        PyErr_SetString(PyExc_RuntimeError, "layout() was not called");
        return NULL;
    }
    PyObject *table = args[3], *actions = args[4], *resolved = args[5], *number = args[8];
    if (!PyList_Check(actions) || !PyList_Check(resolved)) {
        PyErr_SetString(PyExc_TypeError, "actions and resolved must be lists");
        return NULL;
    }
    long shift = PyLong_AsLong(args[2]);
    if (shift == -1 && PyErr_Occurred())
        return NULL;
    if (shift < 0 || shift > 16) {
        PyErr_SetString(PyExc_ValueError, "shift out of range");
        return NULL;
    }
    Py_ssize_t position = PyLong_AsSsize_t(args[6]);
    if (position == -1 && PyErr_Occurred())
        return NULL;
    int exact = PyObject_IsTrue(args[7]);
    if (exact < 0)
        return NULL;
    Py_buffer state_view, lookup_view;
    if (get_buffer(args[0], &state_view, PyBUF_WRITABLE, sizeof(double), "d") < 0)
        return NULL;
    if (get_buffer(args[1], &lookup_view, PyBUF_SIMPLE, sizeof(unsigned short), "H") < 0) {
        PyBuffer_Release(&state_view);
        return NULL;
    }
    double *state = state_view.buf;
    Py_ssize_t slots = state_view.len / (Py_ssize_t)sizeof(double);
    const unsigned short *lookup = lookup_view.buf;
    Py_ssize_t slices = lookup_view.len / (Py_ssize_t)sizeof(unsigned short);
    PyObject *result = NULL;
    if (level_at + dim >= slots || debt_at + dim >= slots) {
        PyErr_SetString(PyExc_IndexError, "state too short");
        goto release;
    }
    double level = state[level_at + dim], owed = state[debt_at + dim], units = 0.0;
    int status = DONE;
    if (position < 0)
        position = 0;
    for (;;) {
        /* The lists may change size only through the callbacks (number); read the count each time. */
        if (position >= PyList_GET_SIZE(actions))
            break;
        PyObject *action = PyList_GET_ITEM(actions, position);
        PyObject *owner = PyObject_GetAttr(action, s_table);
        if (owner == NULL)
            goto fail;
        Py_DECREF(owner);
        if (owner != table)
            break;
        if (position >= PyList_GET_SIZE(resolved)) {
            PyErr_SetString(PyExc_IndexError, "list index out of range");
            goto fail;
        }
        PyObject *pair = PyList_GET_ITEM(resolved, position);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "resolved: expected (old, new) pairs");
            goto fail;
        }
        long long size = 0, old_size;
        if (PyTuple_GET_ITEM(pair, 1) != Py_None && read_size(action, s_new_size, &size) < 0)
            goto fail;
        if (PyTuple_GET_ITEM(pair, 0) != Py_None) {
            if (read_size(action, s_old_size, &old_size) < 0)
                goto fail;
            if (old_size > size)
                size = old_size;
        }
        /* Python's -(-size // unit_bytes): a ceiling that also holds for negative sizes. */
        long long whole = size / unit_bytes;
        if (whole * unit_bytes != size && size > 0)
            whole += 1;
        double need = whole > 1 ? (double)whole : 1.0;
        PyObject *row = PyObject_GetAttr(action, s_row);
        if (row == NULL)
            goto fail;
        if (!PyBytes_Check(row) || PyBytes_GET_SIZE(row) < hash_offset + 2) {
            Py_DECREF(row);
            PyErr_SetString(PyExc_IndexError, "row key without its hash");
            goto fail;
        }
        const unsigned char *bytes = (const unsigned char *)PyBytes_AS_STRING(row);
        Py_ssize_t slice = ((Py_ssize_t)bytes[hash_offset] << 8 | bytes[hash_offset + 1]) >> shift;
        if (slice >= slices) {
            Py_DECREF(row);
            PyErr_SetString(PyExc_IndexError, "array index out of range");
            goto fail;
        }
        long partition = lookup[slice];
        if (partition == ambiguous) { /* a boundary cuts this slice: Resource.number bisects */
            PyObject *found = PyObject_CallOneArg(number, row);
            if (found == NULL) {
                Py_DECREF(row);
                goto fail;
            }
            partition = PyLong_AsLong(found);
            Py_DECREF(found);
            if (partition == -1 && PyErr_Occurred()) {
                Py_DECREF(row);
                goto fail;
            }
        }
        Py_DECREF(row);
        Py_ssize_t at = parts_at + ((Py_ssize_t)partition << 1) + dim;
        if (partition < 0 || at >= slots) {
            PyErr_SetString(PyExc_IndexError, "array index out of range");
            goto fail;
        }
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
            goto fail;
        Py_DECREF(key);
        if (key != Py_None) {
            if (exact) {
                status = SAMPLE;
                units = need;
                break;
            }
            owed += need;
            if (owed >= sample_units) {
                status = SAMPLE;
                units = owed;
                owed = 0.0;
                break;
            }
        }
    }
    state[level_at + dim] = level;
    state[debt_at + dim] = owed;
    result = Py_BuildValue("(ind)", status, position, units);
    goto release;
fail: /* what was debited stays debited, as in py_spend */
    state[level_at + dim] = level;
    state[debt_at + dim] = owed;
release:
    PyBuffer_Release(&lookup_view);
    PyBuffer_Release(&state_view);
    return result;
}

static PyMethodDef spend_methods[] = {
    {"layout", (PyCFunction)spend_layout, METH_VARARGS, layout_doc},
    {"writes", (PyCFunction)(void (*)(void))spend_writes, METH_FASTCALL, writes_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef spend_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "partita.engine.capacity._spend",
    .m_doc = "A batch's writes to one table spent from the meter's leases, in one call (see spend.py).",
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
        || (s_old_size = PyUnicode_InternFromString("old_size")) == NULL)
        return NULL;
    return PyModule_Create(&spend_module);
}
