// textgen_metrics._native._core: the compiled core of the lexical metrics (see __init__.py).
#include "pyutil.hpp"
#include "rouge_py.hpp"
#include "meteor.hpp"
#include "bleu_py.hpp"
#include "treebank.hpp"
#include "perm.hpp"
#include "tercom.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <atomic>

namespace tgm {

// Token lists (list[str]) as ids of one interner.
struct Seqs {
    Interner vocab;
    Keep keep;
    std::vector<u32> ids(py::handle seq, const char* what) {
        std::vector<StrRef> s = str_list(seq, keep, what);
        std::vector<u32> out;
        out.reserve(s.size());
        for (auto& r : s) out.push_back(vocab.intern(r.sv()));
        return out;
    }
};

static u32 py_lcs_length(py::handle a, py::handle b) {
    Seqs s;
    std::vector<u32> x = s.ids(a, "a"), y = s.ids(b, "b");
    py::gil_scoped_release release;
    LcsScratch lcs;
    lcs.ensure_vocab(s.vocab.size());
    return lcs_length(x.data(), x.size(), y.data(), y.size(), lcs);
}

static std::vector<u32> py_lcs_indices(py::handle ref, py::handle can) {
    Seqs s;
    std::vector<u32> r = s.ids(ref, "ref"), c = s.ids(can, "can");
    std::vector<u32> out;
    if (r.empty() || c.empty()) return out;
    py::gil_scoped_release release;
    LcsScratch lcs;
    lcs.ensure_vocab(s.vocab.size());
    size_t W = build_masks(c.data(), c.size(), lcs);
    std::vector<u8> flag(r.size(), 0);
    lcs_indices_mark(r.data(), r.size(), c.size(), W, lcs, flag.data());
    for (size_t i = 0; i < r.size(); ++i)
        if (flag[i]) out.push_back(static_cast<u32>(i));
    return out;
}

static std::vector<std::vector<u32>> py_union_lcs_indices(py::handle refs, py::handle cans) {
    Seqs s;
    std::vector<std::vector<u32>> R, C;
    py::object rf = fast_seq(refs, "ref_sents"), cf = fast_seq(cans, "can_sents");
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(rf.ptr()); ++i)
        R.push_back(s.ids(PySequence_Fast_GET_ITEM(rf.ptr(), i), "ref_sents"));
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(cf.ptr()); ++i)
        C.push_back(s.ids(PySequence_Fast_GET_ITEM(cf.ptr(), i), "can_sents"));
    std::vector<std::vector<u32>> out(R.size());
    py::gil_scoped_release release;
    LcsScratch lcs;
    lcs.ensure_vocab(s.vocab.size());
    std::vector<std::vector<u8>> flags(R.size());
    for (size_t i = 0; i < R.size(); ++i) flags[i].assign(R[i].size(), 0);
    for (auto& c : C) {
        if (c.empty()) continue;
        size_t W = build_masks(c.data(), c.size(), lcs);
        for (size_t i = 0; i < R.size(); ++i) lcs_indices_mark(R[i].data(), R[i].size(), c.size(), W, lcs, flags[i].data());
    }
    for (size_t i = 0; i < R.size(); ++i)
        for (size_t k = 0; k < R[i].size(); ++k)
            if (flags[i][k]) out[i].push_back(static_cast<u32>(k));
    return out;
}

static std::vector<std::vector<u32>> py_lcs_table(py::handle a, py::handle b) {
    Seqs s;
    std::vector<u32> x = s.ids(a, "a"), y = s.ids(b, "b");
    std::vector<std::vector<u32>> t(x.size() + 1, std::vector<u32>(y.size() + 1, 0));
    for (size_t i = 1; i <= x.size(); ++i)
        for (size_t j = 1; j <= y.size(); ++j)
            t[i][j] = x[i - 1] == y[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
    return t;
}

static std::vector<u8> py_wlcs_hits(py::handle model, py::handle peer, double weight, size_t max_table_cells) {
    Seqs s;
    std::vector<u32> m = s.ids(model, "model"), p = s.ids(peer, "peer");
    std::vector<u8> hit(m.size(), 0);
    py::gil_scoped_release release;
    WeightPowers powers;
    WlcsScratch ws;
    const double* P = powers.upto(std::min(m.size(), p.size()) + 2, weight);
    wlcs_mark(m.data(), m.size(), p.data(), p.size(), hit.data(), P, ws, max_table_cells);
    return hit;
}

static py::list py_porter_stem(py::handle words) {
    Keep keep;
    std::vector<StrRef> w = str_list(words, keep, "words");
    std::vector<std::string> out(w.size());
    {
        py::gil_scoped_release release;
        for (size_t i = 0; i < w.size(); ++i) out[i] = porter_stem(w[i].sv());
    }
    return to_pylist(out);
}

static py::list py_treebank_tokenize(py::handle texts) {
    Keep keep;
    std::vector<StrRef> t = str_list(texts, keep, "texts");
    std::vector<std::vector<std::string>> out(t.size());
    {
        py::gil_scoped_release release;
        TreebankTokenizer tb;
        for (size_t i = 0; i < t.size(); ++i) tb.tokenize(t[i].sv(), out[i]);
    }
    py::list res(t.size());
    for (size_t i = 0; i < t.size(); ++i) res[i] = to_pylist(out[i]);
    return res;
}

static py::list py_lower_batch(py::handle texts) {
    Keep keep;
    std::vector<StrRef> w = str_list(texts, keep, "texts");
    std::vector<std::string> out(w.size());
    {
        py::gil_scoped_release release;
        for (size_t i = 0; i < w.size(); ++i) py_lower(w[i].sv(), out[i]);
    }
    return to_pylist(out);
}

// Shewchuk's exact running sum (the partials of math.fsum), fed whole lists at a time.
class ExactSum {
  public:
    void add_many(py::handle values) {
        py::object f = fast_seq(values, "values");
        Py_ssize_t n = PySequence_Fast_GET_SIZE(f.ptr());
        for (Py_ssize_t i = 0; i < n; ++i) {
            double x = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(f.ptr(), i));
            if (x == -1.0 && PyErr_Occurred()) throw py::error_already_set();
            add(x);
        }
        count_ += static_cast<size_t>(n);
    }
    std::vector<double> partials() const { return partials_; }
    size_t count() const { return count_; }

  private:
    void add(double x) {
        size_t i = 0;
        for (double y : partials_) {
            if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
            double hi = x + y;
            double lo = y - (hi - x);
            if (lo != 0.0) partials_[i++] = lo;
            x = hi;
        }
        partials_.resize(i);
        partials_.push_back(x);
    }
    std::vector<double> partials_;
    size_t count_ = 0;
};

// A (groups, systems, systems) int32 array of zeros: pair_counts' and perm_counts' result, whose upper
// triangle perm.hpp's perm_counts fills
static py::array_t<int32_t> zero_counts(size_t groups, size_t systems) {
    py::array_t<int32_t> out({groups, systems, systems});
    std::fill(out.mutable_data(), out.mutable_data() + groups * systems * systems, 0);
    return out;
}

// The counts of pce's rule from given signed sums (stats.agreement.p_values: the sums are pce's own float32
// product): sums (rows, P) float32, row by row; test (groups, systems, systems) float32, the observed
// differences (upper triangle read). Returns counts (groups, systems, systems), upper triangle filled. The
// same float32 subtraction and comparison as pce's NumPy, so the same counts to the bit.
static py::array_t<int32_t> py_pair_counts(py::array_t<float, py::array::c_style | py::array::forcecast> sums,
                                           py::array_t<float, py::array::c_style | py::array::forcecast> test,
                                           size_t groups, size_t systems) {
    if (sums.ndim() != 2 || test.ndim() != 3 || static_cast<size_t>(sums.shape(0)) != groups * systems ||
        static_cast<size_t>(test.shape(0)) != groups || static_cast<size_t>(test.shape(1)) != systems ||
        static_cast<size_t>(test.shape(2)) != systems)
        throw std::invalid_argument("pair_counts: sums must be (groups * systems, P) and test (groups, systems, systems)");
    size_t perms = static_cast<size_t>(sums.shape(1));
    py::array_t<int32_t> out = zero_counts(groups, systems);
    int32_t* counts = out.mutable_data();
    const float* s = sums.data();
    const float* t = test.data();
    {
        py::gil_scoped_release release;
        perm_counts(s, perms, groups, systems, t, counts);
    }
    return out;
}

// Sign-flip permutation counts of one bootstrap resample (perm.hpp): xt (n, rows) float32, the scores item
// by item; the resample's items idx (m); the permutations' sign patterns codes (P, ceil(m / PERM_BITS)); rows are
// `groups` matrices of `systems` rows each. Returns counts (groups, systems, systems), upper triangle
// filled, the rest 0. The observed differences are those of the rows' plain sums (added in double,
// rounded to float32).
static py::array_t<int32_t> py_perm_counts(
        py::array_t<float, py::array::c_style | py::array::forcecast> xt,
        py::array_t<int64_t, py::array::c_style | py::array::forcecast> idx,
        py::array_t<uint8_t, py::array::c_style | py::array::forcecast> codes, size_t groups, size_t systems) {
    if (xt.ndim() != 2 || idx.ndim() != 1 || codes.ndim() != 2)
        throw std::invalid_argument("perm_counts: xt must be 2-D, idx 1-D and codes 2-D");
    size_t n = static_cast<size_t>(xt.shape(0)), rows = static_cast<size_t>(xt.shape(1));
    size_t m = static_cast<size_t>(idx.shape(0)), perms = static_cast<size_t>(codes.shape(0));
    size_t blocks = (m + PERM_BITS - 1) / PERM_BITS, slices = (rows + PERM_LANES - 1) / PERM_LANES;
    if (rows != groups * systems || static_cast<size_t>(codes.shape(1)) != blocks)
        throw std::invalid_argument("perm_counts: xt needs groups * systems columns and codes ceil(m / PERM_BITS) columns");
    const int64_t* ix = idx.data();
    for (size_t j = 0; j < m; ++j)
        if (ix[j] < 0 || static_cast<size_t>(ix[j]) >= n) throw std::out_of_range("perm_counts: idx out of range");
    py::array_t<int32_t> out = zero_counts(groups, systems);
    int32_t* counts = out.mutable_data();
    const float* xs = xt.data();
    const uint8_t* cs = codes.data();
    {
        py::gil_scoped_release release;
        std::vector<float> sums(slices * PERM_LANES * perms);
        std::vector<float> test(groups * systems * systems, 0.0f);
        std::vector<double> plain(rows, 0.0);
        for (size_t j = 0; j < m; ++j) {
            const float* row = xs + static_cast<size_t>(ix[j]) * rows;
            for (size_t r = 0; r < rows; ++r) plain[r] += row[r];
        }
        for (size_t g = 0; g < groups; ++g)
            for (size_t a = 0; a < systems; ++a)
                for (size_t b = a + 1; b < systems; ++b)
                    test[(g * systems + a) * systems + b] = static_cast<float>(plain[g * systems + a]) -
                                                            static_cast<float>(plain[g * systems + b]);
        perm_sums(xs, rows, ix, m, cs, perms, sums.data());
        perm_counts(sums.data(), perms, groups, systems, test.data(), counts);
    }
    return out;
}

// TER's edits (tercom.hpp) of every hypothesis (a token list) against its references (a list of
// token lists): per example (the fewest edits over the references, the references' total length).
static py::list py_ter_edits(py::handle hypotheses, py::handle references, int num_threads) {
    Seqs s;
    py::object hf = fast_seq(hypotheses, "hypotheses"), rf = fast_seq(references, "references");
    size_t n = static_cast<size_t>(PySequence_Fast_GET_SIZE(hf.ptr()));
    if (static_cast<size_t>(PySequence_Fast_GET_SIZE(rf.ptr())) != n)
        throw py::value_error("references: " + std::to_string(PySequence_Fast_GET_SIZE(rf.ptr())) +
                              " examples, hypotheses: " + std::to_string(n));
    std::vector<std::vector<u32>> hyps(n);
    std::vector<std::vector<std::vector<u32>>> refs(n);
    for (size_t i = 0; i < n; ++i) {
        hyps[i] = s.ids(PySequence_Fast_GET_ITEM(hf.ptr(), static_cast<Py_ssize_t>(i)), "hypotheses");
        py::object one = fast_seq(PySequence_Fast_GET_ITEM(rf.ptr(), static_cast<Py_ssize_t>(i)), "references");
        Py_ssize_t k = PySequence_Fast_GET_SIZE(one.ptr());
        refs[i].reserve(static_cast<size_t>(k));
        for (Py_ssize_t r = 0; r < k; ++r) refs[i].push_back(s.ids(PySequence_Fast_GET_ITEM(one.ptr(), r), "references"));
    }
    std::vector<int64_t> best(n, tercom::NO_EDITS), length(n, 0);
    {
        py::gil_scoped_release release;
        size_t vocab = s.vocab.size();
        int t = resolve_threads(num_threads);
        if (static_cast<size_t>(t) > n) t = static_cast<int>(std::max<size_t>(n, 1));
        std::atomic<size_t> next{0};
        // one example at a time from a shared counter: the examples' costs differ by orders of magnitude
        parallel_chunks(static_cast<size_t>(t), t, [&](size_t, size_t, size_t) {
            tercom::Tercom ter;
            for (size_t i; (i = next.fetch_add(1)) < n;) {
                for (auto& ref : refs[i]) {
                    int64_t e = ter.edits(hyps[i].data(), hyps[i].size(), ref.data(), ref.size(), vocab);
                    if (e < best[i]) best[i] = e;
                    length[i] += static_cast<int64_t>(ref.size());
                }
            }
        });
    }
    py::list out(n);
    for (size_t i = 0; i < n; ++i) out[i] = py::make_tuple(best[i], length[i]);
    return out;
}
}  // namespace tgm

PYBIND11_MODULE(_core, m) {
    using namespace tgm;
    m.doc() = "Compiled kernels of textgen_metrics' lexical metrics (see textgen_metrics._native).";

    // The codes of the core's arguments: Python names them (RougeKind.W...), never writes their
    // numbers; a function given a bare int raises TypeError, one given RougeKind(99) ValueError.
    py::enum_<RougeKind>(m, "RougeKind", "The kinds of ROUGE: N (n-grams), L, LSUM, W, S and SU (skip-bigrams).")
        .value("N", RougeKind::N)
        .value("L", RougeKind::L)
        .value("LSUM", RougeKind::LSUM)
        .value("W", RougeKind::W)
        .value("S", RougeKind::S)
        .value("SU", RougeKind::SU);
    py::enum_<RougeInput>(m, "RougeInput", "What RougeCore.score's texts are: TEXT (a str), UNITS (a list of sentence "
                                           "strs) or TOKENS (a (tokens, sentences) pair).")
        .value("TEXT", RougeInput::TEXT)
        .value("UNITS", RougeInput::UNITS)
        .value("TOKENS", RougeInput::TOKENS);
    py::enum_<BleuInput>(m, "BleuInput", "What BleuCore's texts are: TEXT_13A (13a tokens), TEXT_SPLIT (str.split()) or "
                                         "TOKENS (token lists).")
        .value("TEXT_13A", BleuInput::TEXT_13A)
        .value("TEXT_SPLIT", BleuInput::TEXT_SPLIT)
        .value("TOKENS", BleuInput::TOKENS);

    py::class_<RougeCore>(m, "RougeCore")
        .def(py::init<const std::vector<std::pair<RougeKind, long>>&, bool, double>(), py::arg("types"),
             py::arg("use_stemmer"), py::arg("weight"))
        .def("score", &RougeCore::score, py::arg("predictions"), py::arg("references"), py::arg("mode"),
             py::arg("num_threads"));
    py::class_<RougeTokenizerPy>(m, "RougeTokenizer")
        .def(py::init<bool>(), py::arg("use_stemmer"))
        .def("tokenize_batch", &RougeTokenizerPy::tokenize_batch, py::arg("texts"), py::arg("split_lines"));

    py::class_<ExactSum>(m, "ExactSum")
        .def(py::init<>())
        .def("add_many", &ExactSum::add_many, py::arg("values"))
        .def_property_readonly("partials", &ExactSum::partials)
        .def_property_readonly("count", &ExactSum::count);

    py::class_<WordNetIndex, std::shared_ptr<WordNetIndex>>(m, "WordNetIndex")
        .def(py::init<const std::string&>(), py::arg("path"))
        .def_static("build", [](const std::string& dir, const std::string& out) {
            py::gil_scoped_release release;
            WordNetIndex::build(dir, out);
        }, py::arg("wordnet_dir"), py::arg("out_path"))
        .def_property_readonly("n_forms", &WordNetIndex::n_forms)
        .def_property_readonly("n_synsets", &WordNetIndex::n_synsets);
    py::class_<MeteorCore>(m, "MeteorCore")
        .def(py::init<std::shared_ptr<WordNetIndex>>(), py::arg("index"))
        .def("score", &MeteorCore::score, py::arg("predictions"), py::arg("references"), py::arg("alpha"),
             py::arg("beta"), py::arg("gamma"), py::arg("num_threads"), py::arg("texts"))
        .def("align", &MeteorCore::align, py::arg("hypothesis"), py::arg("reference"))
        .def("synonyms", &MeteorCore::synonyms, py::arg("word"));

    py::class_<BleuCore>(m, "BleuCore")
        .def(py::init<>())
        .def("bleu_stats", &BleuCore::bleu_stats, py::arg("predictions"), py::arg("references"), py::arg("tokenizer"),
             py::arg("lowercase"), py::arg("max_order"), py::arg("num_threads"))
        .def("gleu_stats", &BleuCore::gleu_stats, py::arg("predictions"), py::arg("references"), py::arg("tokenizer"),
             py::arg("lowercase"), py::arg("min_len"), py::arg("max_len"), py::arg("num_threads"))
        .def("tokenize", &BleuCore::tokenize, py::arg("texts"), py::arg("tokenizer"), py::arg("lowercase"));

    m.attr("WLCS_FULL") = WLCS_FULL;
    m.def("lcs_length", &py_lcs_length, py::arg("a"), py::arg("b"));
    m.def("lcs_indices", &py_lcs_indices, py::arg("ref"), py::arg("can"));
    m.def("union_lcs_indices", &py_union_lcs_indices, py::arg("ref_sents"), py::arg("can_sents"));
    m.def("lcs_table", &py_lcs_table, py::arg("a"), py::arg("b"));
    m.def("wlcs_hits", &py_wlcs_hits, py::arg("model"), py::arg("peer"), py::arg("weight"),
          py::arg("max_table_cells") = WLCS_FULL);
    m.def("porter_stem", &py_porter_stem, py::arg("words"));
    m.def("lower", &py_lower_batch, py::arg("texts"));
    m.def("treebank_tokenize", &py_treebank_tokenize, py::arg("texts"));
    m.def("pair_counts", &py_pair_counts, py::arg("sums"), py::arg("test"), py::arg("groups"), py::arg("systems"));
    m.attr("PERM_BITS") = PERM_BITS;
    m.def("perm_counts", &py_perm_counts, py::arg("xt"), py::arg("idx"), py::arg("codes"), py::arg("groups"),
          py::arg("systems"));
    m.def("ter_edits", &py_ter_edits, py::arg("hypotheses"), py::arg("references"), py::arg("num_threads") = 1);
}
