/* The compiled line classifier behind observe.parse.scan (optional: scan.py has the same in Python).
 *
 * One pass over a block of whole lines: each line's shape (digits folded to two classes, 0-4 -> '0'
 * and 5-9 -> '5', so that lines differing only in ports and numbers share one) is looked up in a
 * table of the shapes judged so far; a shape not seen yet is folded into a bytes object and handed
 * to the Python judge, whose answer (0 countable, 3 countable with a process prefix, 1 inert; 2 and
 * 4 to 31: kinds of lines to feed) is kept. Lines come out as runs: (kind, start, end, n) with kind
 * 0, 1 or 3 for n consecutive lines of that kind (bytes start..end, the last newline included) and
 * any other kind for one line to feed (start..end, its newline excluded), offsets into the whole
 * buffer (a block is data[lo:hi], read in place).
 * A line longer than max_len (when max_len >= 0) is kind 2 whatever its shape.
 *
 * The table keeps each shape's folded bytes and compares them on a hit, so a hash collision can
 * cost time but never change an answer. Nothing here reads a file or calls anything but the judge.
 * The scan releases the GIL (the judge re-takes it), so other threads (a sidecar's HTTP server) are
 * not held up by it; one Table is used by one thread at a time. (A reader thread classifying the next
 * block while the main one parses was measured slower on two cores: bench/RESULTS.md.)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define SLOTS 8192 /* power of two, twice the most shapes kept */
#define MAX_SHAPES 4096

typedef struct {
    uint64_t hash;
    Py_ssize_t len;
    char *shape; /* folded bytes, malloc'd; NULL: empty slot */
    int kind;
} Slot;

typedef struct {
    PyObject_HEAD
    PyObject *judge;
    Slot *slots;
    Py_ssize_t used;
    char *buf; /* the line being looked up, folded */
    Py_ssize_t cap;
} Table;

static void table_clear(Table *t) {
    for (Py_ssize_t i = 0; i < SLOTS; i++) {
        if (t->slots[i].shape != NULL) {
            PyMem_RawFree(t->slots[i].shape);
            t->slots[i].shape = NULL;
        }
    }
    t->used = 0;
}

static int Table_init(Table *self, PyObject *args, PyObject *kwds) {
    PyObject *judge;
    if (!PyArg_ParseTuple(args, "O", &judge)) return -1;
    if (!PyCallable_Check(judge)) {
        PyErr_SetString(PyExc_TypeError, "judge must be callable");
        return -1;
    }
    Py_INCREF(judge);
    Py_XSETREF(self->judge, judge);
    if (self->slots == NULL) {
        self->slots = PyMem_Calloc(SLOTS, sizeof(Slot));
        if (self->slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    } else {
        table_clear(self);
    }
    return 0;
}

static void Table_dealloc(Table *self) {
    if (self->slots != NULL) {
        table_clear(self);
        PyMem_Free(self->slots);
    }
    PyMem_RawFree(self->buf);
    Py_XDECREF(self->judge);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

#define ONES 0x0101010101010101ULL

/* 8 bytes with their digits folded, at once: a byte is a digit when its low 7 bits xor 0x30 are
 * below 10 and its high bit is clear; a digit becomes '0' or '5' by whether that value is 5 or more */
static inline uint64_t fold8(uint64_t w) {
    uint64_t x = (w & (0x7F * ONES)) ^ (0x30 * ONES);
    uint64_t digit = ~((x + 0x76 * ONES) | w) & (0x80 * ONES);
    uint64_t mask = (digit >> 7) * 0xFF;
    uint64_t five = (((x + 0x7B * ONES) & (0x80 * ONES)) >> 7) * 5;
    return (w & ~mask) | (mask & ((0x30 * ONES) | five));
}

/* the folded line into t->buf (grown as needed); its hash; -1 if no memory */
static int fold_line(Table *t, const unsigned char *line, Py_ssize_t len, uint64_t *hash) {
    if (len + 8 > t->cap) {
        Py_ssize_t cap = (len + 8) * 2;
        char *b = PyMem_RawRealloc(t->buf, (size_t)cap);
        if (b == NULL) return -1;
        t->buf = b;
        t->cap = cap;
    }
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)len;
    Py_ssize_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, line + i, 8);
        w = fold8(w);
        memcpy(t->buf + i, &w, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    if (i < len) {
        uint64_t w = 0;
        memcpy(&w, line + i, (size_t)(len - i));
        w = fold8(w);
        memcpy(t->buf + i, &w, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    *hash = h;
    return 0;
}

/* the kind of one line, -1 on error (the judge raised or answered something else: the error is set).
 * Called without the GIL (*save: the thread state it was released with); a shape not judged yet takes
 * the GIL for the judge and releases it again before returning. */
static int judge_shape(Table *t, const char *buf, Py_ssize_t len, uint64_t h, size_t i);

static int kind_of(Table *t, const unsigned char *line, Py_ssize_t len, PyThreadState **save) {
    uint64_t h;
    if (fold_line(t, line, len, &h) < 0) {
        PyEval_RestoreThread(*save);
        PyErr_NoMemory();
        *save = PyEval_SaveThread();
        return -1;
    }
    const char *buf = t->buf;
    size_t i = (size_t)(h ^ (h >> 29)) & (SLOTS - 1);
    for (;;) {
        Slot *s = &t->slots[i];
        if (s->shape == NULL) break;
        if (s->hash == h && s->len == len && memcmp(s->shape, buf, (size_t)len) == 0) return s->kind;
        i = (i + 1) & (SLOTS - 1);
    }
    /* not judged yet */
    PyEval_RestoreThread(*save);
    int kind = judge_shape(t, buf, len, h, i);
    *save = PyEval_SaveThread();
    return kind;
}

static int judge_shape(Table *t, const char *buf, Py_ssize_t len, uint64_t h, size_t i) {
    PyObject *shape = PyBytes_FromStringAndSize(buf, len);
    if (shape == NULL) return -1;
    PyObject *r = PyObject_CallOneArg(t->judge, shape);
    if (r == NULL) {
        Py_DECREF(shape);
        return -1;
    }
    long kind = PyLong_AsLong(r);
    Py_DECREF(r);
    if (kind == -1 && PyErr_Occurred()) {
        Py_DECREF(shape);
        return -1;
    }
    if (kind < 0 || kind > 31) {
        Py_DECREF(shape);
        PyErr_SetString(PyExc_ValueError, "judge must answer a kind from 0 to 31");
        return -1;
    }
    if (t->used >= MAX_SHAPES) {
        table_clear(t);
        i = (size_t)(h ^ (h >> 29)) & (SLOTS - 1);
    }
    while (t->slots[i].shape != NULL) i = (i + 1) & (SLOTS - 1);
    char *copy = PyMem_RawMalloc(len > 0 ? (size_t)len : 1);
    if (copy == NULL) {
        Py_DECREF(shape);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(copy, PyBytes_AS_STRING(shape), (size_t)len);
    Py_DECREF(shape);
    t->slots[i].hash = h;
    t->slots[i].len = len;
    t->slots[i].shape = copy;
    t->slots[i].kind = (int)kind;
    t->used++;
    return (int)kind;
}

/* the kinds whose lines are counted in runs (scan.COUNTED); the others are fed one line at a time */
static inline int counted(int kind) { return kind == 0 || kind == 1 || kind == 3; }

typedef struct {
    Py_ssize_t start, end, n;
    int kind;
} Run;

typedef struct {
    Run *runs;
    Py_ssize_t len, cap;
} Runs;

static int push_run(Runs *r, int kind, Py_ssize_t start, Py_ssize_t end, Py_ssize_t n) {
    if (r->len == r->cap) {
        Py_ssize_t cap = r->cap ? r->cap * 2 : 256;
        Run *b = PyMem_RawRealloc(r->runs, (size_t)cap * sizeof(Run));
        if (b == NULL) return -1;
        r->runs = b;
        r->cap = cap;
    }
    r->runs[r->len++] = (Run){start, end, n, kind};
    return 0;
}

/* The scan itself runs without the GIL; the judge takes it. */
static PyObject *Table_runs(Table *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t lo = 0, hi = -1, max_len = -1;
    if (!PyArg_ParseTuple(args, "y*|nnn", &view, &lo, &hi, &max_len)) return NULL;
    const unsigned char *data = view.buf;
    Py_ssize_t size = hi < 0 ? view.len : hi;
    if (lo < 0 || size > view.len || lo > size) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "lo..hi is not within the data");
        return NULL;
    }
    Runs r = {NULL, 0, 0};
    int err = 0; /* 1: the judge failed (error set), 2: no memory, 3: no final newline */
    Py_ssize_t pos = lo;
    int run_kind = -1;
    Py_ssize_t run_start = 0, run_n = 0;
    PyThreadState *save = PyEval_SaveThread();
    while (pos < size) {
        const unsigned char *nl = memchr(data + pos, '\n', (size_t)(size - pos));
        if (nl == NULL) {
            err = 3;
            break;
        }
        Py_ssize_t end = nl - data;
        Py_ssize_t len = end - pos;
        int kind = kind_of(self, data + pos, len, &save);
        if (kind < 0) {
            err = 1;
            break;
        }
        if (max_len >= 0 && len > max_len) kind = 2;
        if (kind != run_kind || !counted(kind)) {
            if (run_kind >= 0 && counted(run_kind) && push_run(&r, run_kind, run_start, pos, run_n) < 0) {
                err = 2;
                break;
            }
            run_kind = kind;
            run_start = pos;
            run_n = 0;
        }
        if (!counted(kind)) {
            if (push_run(&r, kind, pos, end, 1) < 0) {
                err = 2;
                break;
            }
            run_kind = -1;
        } else {
            run_n++;
        }
        pos = end + 1;
    }
    if (!err && run_kind >= 0 && counted(run_kind) && push_run(&r, run_kind, run_start, pos, run_n) < 0)
        err = 2;
    PyEval_RestoreThread(save);
    PyBuffer_Release(&view);
    PyObject *out = NULL;
    if (err == 2) {
        PyErr_NoMemory();
    } else if (err == 3) {
        PyErr_SetString(PyExc_ValueError, "the block must end with a newline");
    } else if (err == 0) {
        out = PyList_New(r.len);
        for (Py_ssize_t k = 0; out != NULL && k < r.len; k++) {
            Run *x = &r.runs[k];
            PyObject *t = Py_BuildValue("(innn)", x->kind, x->start, x->end, x->n);
            if (t == NULL) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, k, t);
        }
    }
    PyMem_RawFree(r.runs);
    return out;
}

static PyMethodDef Table_methods[] = {
    {"runs", (PyCFunction)Table_runs, METH_VARARGS,
     "runs(data, lo=0, hi=-1, max_len=-1) -> [(kind, start, end, n)]: data[lo:hi] is whole lines, "
     "ending with a newline (hi -1: the end of data); offsets are into data"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "observe.parse._scanc.Table",
    .tp_basicsize = sizeof(Table),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Table(judge): the shapes judged so far, and the runs of a block",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Table_init,
    .tp_dealloc = (destructor)Table_dealloc,
    .tp_methods = Table_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_scanc", "The compiled line classifier of observe.parse.scan.", -1, NULL,
};

PyMODINIT_FUNC PyInit__scanc(void) {
    if (PyType_Ready(&TableType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&TableType);
    if (PyModule_AddObject(m, "Table", (PyObject *)&TableType) < 0) {
        Py_DECREF(&TableType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
