// Python face of the ROUGE kernels: a batch scorer (texts, sentence units or tokens in; P, R, F
// per type out, best of the references) and the tokenizer.
#pragma once

#include "pyutil.hpp"
#include "rouge.hpp"

namespace tgm {

// One text as the batch holds it.
struct Src {
    u32 first;  // index of its first string in the batch's string table
    u32 count;  // text: 1; units: the units; tokens: flat tokens + sentence tokens
    u32 ntok;   // tokens mode: how many of the strings are the flat tokens
    u32 sfirst; // tokens mode: index of its first sentence length in the batch's length table
    u32 nsent;
};

// What a batch's texts are, in RougeCore.score: Python reads the codes as _core.RougeInput.
enum class RougeInput : int {
    TEXT = 0,    // a str each (rouge-score's tokenizer; a line is a sentence)
    UNITS = 1,   // a list of sentence strs each (rouge-score's tokenizer)
    TOKENS = 2,  // a (tokens, sentences) pair each, tokenised in Python
};

struct RougeState {
    RougeTokenizer tok;
    Work wk;
    WlcsScratch ws;
    Doc pred, ref;
    Stamped local;   // vocabulary id -> the example's own id (0, 1, ...)
    u32 n_local = 0;

    // d's tokens renumbered by first appearance in the example: the scoring's per-token arrays
    // then span the example's few dozen words, not the vocabulary (tens of thousands of ids over
    // a large batch, whose random look-ups would miss the cache at every token)
    void localize(Doc& d) {
        local.ensure(tok.vocab.size());
        for (std::vector<u32>* v : {&d.toks, &d.stoks})
            for (u32& t : *v) {
                if (!local.has(t)) local.ref(t) = n_local++;
                t = local.get(t);
            }
    }
};

class RougeCore {
  public:
    RougeCore(const std::vector<std::pair<RougeKind, long>>& types, bool use_stemmer, double weight)
        : weight_(weight), use_stemmer_(use_stemmer) {
        for (auto& t : types) {
            if (!is_known(t.first))
                throw py::value_error("types: unknown ROUGE kind " + std::to_string(static_cast<int>(t.first)) +
                                      "; RougeKind has N, L, LSUM, W, S and SU");
            types_.push_back({t.first, t.second});
        }
    }

    // preds: a list of texts; refs: a list (per example) of lists of texts, or in TEXT mode of
    // one text each as a bare str. A "text" is what the mode says (RougeInput). Returns
    // 3 * len(types) lists: P, R, F of each type, per example.
    py::list score(py::handle preds, py::handle refs, RougeInput mode, int num_threads) {
        if (mode != RougeInput::TEXT && mode != RougeInput::UNITS && mode != RougeInput::TOKENS)
            throw py::value_error("mode: unknown RougeInput " + std::to_string(static_cast<int>(mode)) +
                                  "; it has TEXT, UNITS and TOKENS");
        Batch b;
        b.mode = mode;
        py::object pf = fast_seq(preds, "predictions");
        py::object rf = fast_seq(refs, "references");
        Py_ssize_t n = PySequence_Fast_GET_SIZE(pf.ptr());
        if (PySequence_Fast_GET_SIZE(rf.ptr()) != n)
            throw py::value_error("predictions and references differ in length");
        b.pred.reserve(static_cast<size_t>(n));
        b.ref_begin.reserve(static_cast<size_t>(n) + 1);
        for (Py_ssize_t i = 0; i < n; ++i) {
            b.pred.push_back(add_src(b, PySequence_Fast_GET_ITEM(pf.ptr(), i), "predictions", static_cast<size_t>(i)));
            b.ref_begin.push_back(static_cast<u32>(b.refs.size()));
            PyObject* item = PySequence_Fast_GET_ITEM(rf.ptr(), i);
            if (mode == RougeInput::TEXT && PyUnicode_Check(item)) {  // one reference, not wrapped in a list
                b.refs.push_back(add_src(b, item, "references", static_cast<size_t>(i)));
                continue;
            }
            py::object rl = fast_seq(item, "references");
            Py_ssize_t nr = PySequence_Fast_GET_SIZE(rl.ptr());
            for (Py_ssize_t j = 0; j < nr; ++j)
                b.refs.push_back(add_src(b, PySequence_Fast_GET_ITEM(rl.ptr(), j), "references", static_cast<size_t>(i)));
        }
        b.ref_begin.push_back(static_cast<u32>(b.refs.size()));
        size_t T = types_.size();
        std::vector<double> out(static_cast<size_t>(n) * T * 3, 0.0);
        {
            py::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(mutex_);
            int nt = resolve_threads(num_threads);
            while (states_.size() < static_cast<size_t>(nt)) {
                states_.emplace_back(new RougeState());
                states_.back()->tok.use_stemmer = use_stemmer_;
            }
            if (mode != RougeInput::TOKENS) {  // each thread reads about 1/nt of the batch
                size_t bytes = 0;
                for (const StrRef& t : b.strs) bytes += t.n;
                for (int k = 0; k < nt; ++k) states_[static_cast<size_t>(k)]->tok.reserve_for(bytes / static_cast<size_t>(nt));
            }
            parallel_chunks(static_cast<size_t>(n), nt, [&](size_t k, size_t lo, size_t hi) {
                RougeState& st = *states_[k];
                for (size_t i = lo; i < hi; ++i) score_example(b, i, st, &out[i * T * 3]);
            });
        }
        py::list result(T * 3);
        for (size_t t = 0; t < T; ++t)
            for (size_t f = 0; f < 3; ++f)
                PyList_SET_ITEM(result.ptr(), static_cast<Py_ssize_t>(t * 3 + f),
                                floats(&out[t * 3 + f], static_cast<size_t>(n), T * 3).release().ptr());
        return result;
    }

  private:
    struct Batch {
        RougeInput mode = RougeInput::TEXT;
        Keep keep;
        std::vector<StrRef> strs;
        std::vector<u32> sent_len;
        std::vector<Src> pred, refs;
        std::vector<u32> ref_begin;
    };

    Src add_src(Batch& b, PyObject* o, const char* what, size_t index) {
        Src s{static_cast<u32>(b.strs.size()), 0, 0, static_cast<u32>(b.sent_len.size()), 0};
        if (b.mode == RougeInput::TEXT) {
            b.strs.push_back(utf8_of(o, b.keep, what, index));
            s.count = 1;
        } else if (b.mode == RougeInput::UNITS) {
            std::vector<StrRef> units = str_list(o, b.keep, what);
            b.strs.insert(b.strs.end(), units.begin(), units.end());
            s.count = static_cast<u32>(units.size());
        } else {
            py::object pair = fast_seq(o, what);
            if (PySequence_Fast_GET_SIZE(pair.ptr()) != 2) throw py::value_error("tokens mode: expected (tokens, sentences)");
            std::vector<StrRef> toks = str_list(PySequence_Fast_GET_ITEM(pair.ptr(), 0), b.keep, what);
            b.strs.insert(b.strs.end(), toks.begin(), toks.end());
            s.ntok = static_cast<u32>(toks.size());
            py::object sents = fast_seq(PySequence_Fast_GET_ITEM(pair.ptr(), 1), what);
            Py_ssize_t ns = PySequence_Fast_GET_SIZE(sents.ptr());
            for (Py_ssize_t k = 0; k < ns; ++k) {
                std::vector<StrRef> st = str_list(PySequence_Fast_GET_ITEM(sents.ptr(), k), b.keep, what);
                b.strs.insert(b.strs.end(), st.begin(), st.end());
                b.sent_len.push_back(static_cast<u32>(st.size()));
            }
            s.nsent = static_cast<u32>(ns);
            s.count = static_cast<u32>(b.strs.size()) - s.first;
            b.keep.objs.push_back(pair);
            b.keep.objs.push_back(sents);
        }
        return s;
    }

    void build(const Batch& b, const Src& s, RougeState& st, Doc& d) {
        d.clear();
        if (b.mode == RougeInput::TEXT) {
            const StrRef& t = b.strs[s.first];
            st.tok.tokenize(t.p, t.n, d.toks, &d.sbeg);
            d.stoks = d.toks;
        } else if (b.mode == RougeInput::UNITS) {
            for (u32 k = 0; k < s.count; ++k) {
                const StrRef& t = b.strs[s.first + k];
                d.sbeg.push_back(static_cast<u32>(d.toks.size()));
                st.tok.tokenize(t.p, t.n, d.toks, nullptr);
            }
            d.stoks = d.toks;
        } else {
            for (u32 k = 0; k < s.ntok; ++k) d.toks.push_back(st.tok.vocab.intern(b.strs[s.first + k].sv()));
            u32 at = s.first + s.ntok;
            for (u32 k = 0; k < s.nsent; ++k) {
                d.sbeg.push_back(static_cast<u32>(d.stoks.size()));
                u32 len = b.sent_len[s.sfirst + k];
                for (u32 q = 0; q < len; ++q) d.stoks.push_back(st.tok.vocab.intern(b.strs[at + q].sv()));
                at += len;
            }
        }
        d.sbeg.push_back(static_cast<u32>(d.stoks.size()));
    }

    void score_example(const Batch& b, size_t i, RougeState& st, double* out) {
        st.tok.reset_if_large();
        st.local.reset();
        st.n_local = 0;
        build(b, b.pred[i], st, st.pred);
        st.localize(st.pred);
        size_t T = types_.size();
        bool first = true;
        for (u32 r = b.ref_begin[i]; r < b.ref_begin[i + 1]; ++r) {
            build(b, b.refs[r], st, st.ref);
            st.localize(st.ref);
            st.wk.ensure_vocab(st.n_local);
            for (size_t t = 0; t < T; ++t) {
                Score3 s = score_type(types_[t], st.ref, st.pred, weight_, st.wk, st.ws);
                double* o = out + t * 3;
                if (first || s.f > o[2]) {
                    o[0] = s.p;
                    o[1] = s.r;
                    o[2] = s.f;
                }
            }
            first = false;
        }
    }

    std::vector<RougeType> types_;
    double weight_;
    bool use_stemmer_;
    std::vector<std::unique_ptr<RougeState>> states_;
    std::mutex mutex_;
};

// rouge-score's tokenizer over a batch: tokens (or, with split_lines, the tokens of each
// non-empty line) of every text.
class RougeTokenizerPy {
  public:
    explicit RougeTokenizerPy(bool use_stemmer) { tok_.use_stemmer = use_stemmer; }

    py::list tokenize_batch(py::handle texts, bool split_lines) {
        Keep keep;
        std::vector<StrRef> t = str_list(texts, keep, "texts");
        std::vector<std::vector<u32>> toks(t.size()), starts(t.size());
        {
            py::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(mutex_);
            tok_.reset_if_large();
            for (size_t i = 0; i < t.size(); ++i)
                tok_.tokenize(t[i].p, t[i].n, toks[i], split_lines ? &starts[i] : nullptr);
        }
        py::list out(t.size());
        for (size_t i = 0; i < t.size(); ++i) {
            py::list item;
            if (!split_lines) {
                item = words(toks[i], 0, toks[i].size());
            } else {
                starts[i].push_back(static_cast<u32>(toks[i].size()));
                item = py::list(starts[i].size() - 1);
                for (size_t k = 0; k + 1 < starts[i].size(); ++k)
                    PyList_SET_ITEM(item.ptr(), static_cast<Py_ssize_t>(k),
                                    words(toks[i], starts[i][k], starts[i][k + 1]).release().ptr());
            }
            PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), item.release().ptr());
        }
        return out;
    }

  private:
    py::list words(const std::vector<u32>& ids, size_t b, size_t e) {
        py::list out(e - b);
        for (size_t k = b; k < e; ++k)
            PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(k - b), to_pystr(tok_.vocab.str(ids[k])).release().ptr());
        return out;
    }
    RougeTokenizer tok_;
    std::mutex mutex_;
};

}  // namespace tgm
