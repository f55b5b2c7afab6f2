/* SigV4's per-request hashing in one call, over OpenSSL's SHA-256 (libcrypto).
 *
 * Why C: verifying a signature finishes four SHA-256 hashes (the body, the
 * canonical request, HMAC's inner and outer hash). Through hashlib each one
 * allocates a Python object, an EVP context and a provider context, and
 * copies them to finish; in a loaded server those allocations and the cache
 * misses around them cost more than the hashing (docs/decisions.md,
 * "Authentication: the SigV4 accelerator"). Here the states are plain
 * SHA256_CTX structures copied on the stack. Nothing cryptographic is
 * written here: SHA-256 is OpenSSL's, HMAC is the textbook composition of
 * two SHA-256 states that sigv4.py also uses, and the comparison is
 * OpenSSL's constant-time CRYPTO_memcmp. partita/protocol/auth/digest.py
 * is the same three functions in Python, used when this module is not built.
 */
#define PY_SSIZE_T_CLEAN
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA256_Init and friends: deprecated in 3.0, still exported */
#include <Python.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

/* Bodies longer than this are hashed without the GIL (as hashlib does past 2 KiB). */
#define NOGIL_BYTES 65536

static const char HEX[] = "0123456789abcdef";

static void
to_hex(const unsigned char *digest, char *out)
{
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
        out[2 * i] = HEX[digest[i] >> 4];
        out[2 * i + 1] = HEX[digest[i] & 15];
    }
}

/* A state passed from Python: bytes of exactly sizeof(SHA256_CTX), made by `state`. */
static int
read_state(PyObject *obj, SHA256_CTX *ctx)
{
    if (!PyBytes_Check(obj) || PyBytes_GET_SIZE(obj) != (Py_ssize_t)sizeof(SHA256_CTX)) {
        PyErr_SetString(PyExc_TypeError, "not a SHA-256 state of this module");
        return -1;
    }
    memcpy(ctx, PyBytes_AS_STRING(obj), sizeof(SHA256_CTX));
    return 0;
}

static void
absorb(SHA256_CTX *ctx, const Py_buffer *data)
{
    if (data->len > NOGIL_BYTES) {
        Py_BEGIN_ALLOW_THREADS
        SHA256_Update(ctx, data->buf, (size_t)data->len);
        Py_END_ALLOW_THREADS
    }
    else {
        SHA256_Update(ctx, data->buf, (size_t)data->len);
    }
}

PyDoc_STRVAR(state_doc,
"state(data, start=None) -> bytes\n\n"
"The SHA-256 state after absorbing data (after start's bytes, when given).");

static PyObject *
digest_state(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer data;
    PyObject *start = Py_None;
    SHA256_CTX ctx;
    if (!PyArg_ParseTuple(args, "y*|O:state", &data, &start)) {
        return NULL;
    }
    if (start == Py_None) {
        SHA256_Init(&ctx);
    }
    else if (read_state(start, &ctx) < 0) {
        PyBuffer_Release(&data);
        return NULL;
    }
    absorb(&ctx, &data);
    PyBuffer_Release(&data);
    return PyBytes_FromStringAndSize((const char *)&ctx, sizeof(SHA256_CTX));
}

PyDoc_STRVAR(join_doc,
"join(canonical, inner, outer) -> bytes\n\n"
"The three states `check` continues, in one object (read together, as one\n"
"request reads them): the canonical request's state less the body's hex hash,\n"
"HMAC's inner state having absorbed the string to sign less the canonical\n"
"request's hex hash, and HMAC's outer state.");

static PyObject *
digest_join(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    SHA256_CTX three[3];
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "join() takes 3 arguments");
        return NULL;
    }
    for (int i = 0; i < 3; i++) {
        if (read_state(args[i], &three[i]) < 0) {
            return NULL;
        }
    }
    return PyBytes_FromStringAndSize((const char *)three, sizeof(three));
}

PyDoc_STRVAR(check_doc,
"check(states, body, signature) -> bool\n\n"
"Whether signature (64 lower-case hex bytes) is HMAC-SHA256 of the string to sign,\n"
"continuing the three states of `join` over the body's hash. Compared in constant time.");

static PyObject *
digest_check(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    SHA256_CTX canonical, inner, outer;
    unsigned char digest[SHA256_DIGEST_LENGTH];
    char hex[2 * SHA256_DIGEST_LENGTH];
    Py_buffer body, signature;
    const char *three;
    int equal;

    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "check() takes 3 arguments");
        return NULL;
    }
    if (!PyBytes_Check(args[0]) || PyBytes_GET_SIZE(args[0]) != (Py_ssize_t)(3 * sizeof(SHA256_CTX))) {
        PyErr_SetString(PyExc_TypeError, "not the joined SHA-256 states of this module");
        return NULL;
    }
    three = PyBytes_AS_STRING(args[0]);
    memcpy(&canonical, three, sizeof(SHA256_CTX));
    memcpy(&inner, three + sizeof(SHA256_CTX), sizeof(SHA256_CTX));
    memcpy(&outer, three + 2 * sizeof(SHA256_CTX), sizeof(SHA256_CTX));
    if (PyObject_GetBuffer(args[1], &body, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    if (PyObject_GetBuffer(args[2], &signature, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&body);
        return NULL;
    }
    {
        SHA256_CTX ctx;
        SHA256_Init(&ctx);
        absorb(&ctx, &body);
        SHA256_Final(digest, &ctx);
    }
    to_hex(digest, hex);
    SHA256_Update(&canonical, hex, sizeof(hex));
    SHA256_Final(digest, &canonical);
    to_hex(digest, hex);
    SHA256_Update(&inner, hex, sizeof(hex));
    SHA256_Final(digest, &inner);
    SHA256_Update(&outer, digest, sizeof(digest));
    SHA256_Final(digest, &outer);
    to_hex(digest, hex);
    equal = signature.len == (Py_ssize_t)sizeof(hex)
            && CRYPTO_memcmp(hex, signature.buf, sizeof(hex)) == 0;
    PyBuffer_Release(&body);
    PyBuffer_Release(&signature);
    OPENSSL_cleanse(&inner, sizeof(inner));
    OPENSSL_cleanse(&outer, sizeof(outer));
    return PyBool_FromLong(equal);
}

static PyMethodDef digest_methods[] = {
    {"state", (PyCFunction)digest_state, METH_VARARGS, state_doc},
    {"join", (PyCFunction)(void (*)(void))digest_join, METH_FASTCALL, join_doc},
    {"check", (PyCFunction)(void (*)(void))digest_check, METH_FASTCALL, check_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef digest_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "partita.protocol.auth._digest",
    .m_doc = "SigV4's per-request SHA-256 work over OpenSSL, in one call (see digest.py).",
    .m_size = 0,
    .m_methods = digest_methods,
};

PyMODINIT_FUNC
PyInit__digest(void)
{
    return PyModule_Create(&digest_module);
}
