/* A program's dependencies as flat int64 arrays (strider.sim.native_loop.deps_arrays),
 * read straight from the Python objects: deps is a list (or tuple) of n tuples (or
 * lists) of Python ints, one per instruction. NumPy's fromiter over them converts each
 * int through the iterator protocol, which cost a PE sketch's estimate a third of its
 * time; here each is read in place.
 *
 * Loaded with ctypes.PyDLL (the GIL held throughout). Anything else than the shapes
 * above (a NumPy integer, a generator, an int past int64) makes a function return -1
 * with no Python error left set: the caller then takes NumPy's way.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static PyObject **items_of(PyObject *seq, Py_ssize_t *n) {
    if (PyList_Check(seq)) {
        *n = PyList_GET_SIZE(seq);
        return ((PyListObject *)seq)->ob_item;
    }
    if (PyTuple_Check(seq)) {
        *n = PyTuple_GET_SIZE(seq);
        return ((PyTupleObject *)seq)->ob_item;
    }
    return NULL;
}

/* nd[k] = len(deps[k]) for each of the n instructions; returns their sum, or -1. */
int64_t strider_count_deps(PyObject *deps, int64_t n, int64_t *nd) {
    Py_ssize_t count, m;
    PyObject **rows = items_of(deps, &count);
    int64_t total = 0;
    if (rows == NULL || count != n) return -1;
    for (Py_ssize_t k = 0; k < count; k++) {
        if (items_of(rows[k], &m) == NULL) return -1;
        nd[k] = (int64_t)m;
        total += (int64_t)m;
    }
    return total;
}

/* flat[] = every instruction's dependencies in id order (as counted by
 * strider_count_deps, total of them); returns 0, or -1. */
int64_t strider_flatten_deps(PyObject *deps, int64_t total, int64_t *flat) {
    Py_ssize_t count, m;
    PyObject **rows = items_of(deps, &count);
    int64_t i = 0;
    if (rows == NULL) return -1;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject **row = items_of(rows[k], &m);
        if (row == NULL || i + (int64_t)m > total) return -1;
        for (Py_ssize_t j = 0; j < m; j++) {
            PyObject *d = row[j];
            if (!PyLong_CheckExact(d)) return -1;
            long long v = PyLong_AsLongLong(d);
            if (v == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                return -1;
            }
            flat[i++] = (int64_t)v;
        }
    }
    return i == total ? 0 : -1;
}
