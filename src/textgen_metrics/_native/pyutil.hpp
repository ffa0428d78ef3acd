// Strings in, numbers out: reading Python strings and lists into C++ views while the GIL is
// held, so that kernels can run without it.
#pragma once

#include <pybind11/pybind11.h>

#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "common.hpp"

namespace py = pybind11;

namespace tgm {

struct StrRef {
    const char* p;
    size_t n;
    std::string_view sv() const { return std::string_view(p, n); }
};

// Keeps every Python object whose buffer a StrRef points into alive (and unchanged) until the
// kernel is done, even if another thread mutates the lists meanwhile.
struct Keep {
    std::vector<py::object> objs;
};

inline StrRef utf8_of(PyObject* o, Keep& keep, const char* what, size_t index) {
    if (!PyUnicode_Check(o)) {
        throw py::type_error(std::string(what) + "[" + std::to_string(index) + "]: expected str, got " +
                             Py_TYPE(o)->tp_name);
    }
    keep.objs.push_back(py::reinterpret_borrow<py::object>(o));
    Py_ssize_t n = 0;
    const char* p = PyUnicode_AsUTF8AndSize(o, &n);
    if (!p) {
        // lone surrogates: their code points, as Python holds them
        PyErr_Clear();
        PyObject* b = PyUnicode_AsEncodedString(o, "utf-8", "surrogatepass");
        if (!b) throw py::error_already_set();
        keep.objs.push_back(py::reinterpret_steal<py::object>(b));
        return {PyBytes_AS_STRING(b), static_cast<size_t>(PyBytes_GET_SIZE(b))};
    }
    return {p, static_cast<size_t>(n)};
}

// A sequence as a list/tuple we can index without the iterator protocol.
inline py::object fast_seq(py::handle o, const char* what) {
    PyObject* f = PySequence_Fast(o.ptr(), what);
    if (!f) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(f);
}

inline std::vector<StrRef> str_list(py::handle seq, Keep& keep, const char* what) {
    py::object f = fast_seq(seq, what);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(f.ptr());
    PyObject** items = PySequence_Fast_ITEMS(f.ptr());
    std::vector<StrRef> out;
    out.reserve(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) out.push_back(utf8_of(items[i], keep, what, static_cast<size_t>(i)));
    keep.objs.push_back(f);
    return out;
}

inline py::list to_pylist(const std::vector<std::string>& v) {
    py::list out(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        PyObject* s = PyUnicode_DecodeUTF8(v[i].data(), static_cast<Py_ssize_t>(v[i].size()), "surrogatepass");
        if (!s) throw py::error_already_set();
        PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), s);
    }
    return out;
}

inline py::str to_pystr(std::string_view v) {
    PyObject* s = PyUnicode_DecodeUTF8(v.data(), static_cast<Py_ssize_t>(v.size()), "surrogatepass");
    if (!s) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(s);
}

inline py::list floats(const double* v, size_t n, size_t stride = 1) {
    py::list out(n);
    for (size_t i = 0; i < n; ++i) {
        PyObject* f = PyFloat_FromDouble(v[i * stride]);
        if (!f) throw py::error_already_set();
        PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), f);
    }
    return out;
}

// Run fn(thread_index, begin, end) over [0, n) in up to num_threads contiguous chunks.
// A thread the system refuses to start (std::system_error: no memory for its stack, a process
// limit) never aborts the process: the chunks no thread took run here, one after the other, once
// the threads that did start are running (the result is the same, only slower).
template <class F>
void parallel_chunks(size_t n, int num_threads, F&& fn) {
    size_t t = static_cast<size_t>(std::max(1, num_threads));
    if (t > n) t = std::max<size_t>(1, n);
    if (t == 1) {
        fn(size_t(0), size_t(0), n);
        return;
    }
    std::vector<std::exception_ptr> errors(t);
    auto chunk = [&](size_t k) {
        try {
            fn(k, n * k / t, n * (k + 1) / t);
        } catch (...) {
            errors[k] = std::current_exception();
        }
    };
    std::vector<std::thread> threads;
    threads.reserve(t);  // emplace_back below never reallocates: only a thread's start can fail
    size_t started = 0;
    for (; started < t; ++started) {
        try {
            threads.emplace_back(chunk, started);
        } catch (const std::system_error&) {
            break;
        }
    }
    for (size_t k = started; k < t; ++k) chunk(k);
    for (auto& th : threads) th.join();
    for (auto& err : errors)
        if (err) std::rethrow_exception(err);
}

inline int resolve_threads(int num_threads) {
    if (num_threads > 0) return num_threads;
    unsigned hw = std::thread::hardware_concurrency();
    return hw ? static_cast<int>(hw) : 1;
}

}  // namespace tgm
