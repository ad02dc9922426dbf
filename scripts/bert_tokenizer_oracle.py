#!/usr/bin/env python3
"""Independent reference for trainyard's BertTokenizer: HF's slow BertTokenizer, re-stated in Python.

Why this exists: the C++ tokenizer (src/text/) must produce exactly what
`transformers.BertTokenizer(vocab, do_lower_case=True)` produces, and the expected outputs of its
golden tests must not come from the C++ code itself. transformers is not installable here, so this
file re-states, step for step, what transformers' `PreTrainedTokenizer.tokenize` (tokenization_utils.py,
v4.3x+, the Trie-based version) and `BertTokenizer` / `BasicTokenizer` / `WordpieceTokenizer`
(models/bert/tokenization_bert.py) do, using Python's `unicodedata` exactly as HF does. The order of
the steps, including the quirks, is kept:

  1. do_lower_case: every character that is not part of a literal special token ([CLS], [MASK], ...)
     is lowercased one character at a time (HF's `re.sub(r"(specials)|(.+?)", ...)`), so no
     Final_Sigma context applies and U+0130 becomes "i" + U+0307.
  2. the text is split around literal special tokens (HF's added-tokens Trie); those stay whole.
  3. each other piece goes through BasicTokenizer: clean text (drop NUL, U+FFFD, category C* except
     \\t\\n\\r; Zs and \\t\\n\\r become spaces), spaces around CJK ideographs, NFC, str.split()
     (which also splits on U+2028/U+2029), per token lower() + NFD + drop Mn, split punctuation,
     str.split() again; then WordPiece (greedy longest match, "##" continuations, > 100 chars or any
     unmatched piece -> the whole word is [UNK]).
  4. encode: [CLS] + ids[:max_length-2] + [SEP].

Usage:
  scripts/bert_tokenizer_oracle.py generate [--vocab data/sample/vocab.txt] [--out FILE]
      Regenerates test/fixtures/tokenizer/bert_uncased_golden.jsonl from CASES below (and
      bert_uncased_pairs.jsonl from PAIR_CASES), after checking
      the oracle against the outputs published by HF (HF_VERIFIED) and that no case uses a code point
      on which Python's Unicode tables and utf8proc's differ.
  scripts/bert_tokenizer_oracle.py tokenize [--vocab FILE] [--tokens]
      stdin lines -> one line of ids (or wordpieces) each, with [CLS]/[SEP], like
      `trainyard-bert tokenize`; for differential testing (see `fuzz`).
  scripts/bert_tokenizer_oracle.py fuzz --binary build/tools/trainyard-bert [--count N] [--seed S]
                                        [--tokens] [--invalid-bytes]
      Random texts (ASCII-heavy, accents, CJK, emoji, controls, specials, all planes; with
      --invalid-bytes also random bytes) through both this oracle and the C++ CLI; prints the
      first mismatches. Exit 1 on any mismatch.
  scripts/bert_tokenizer_oracle.py unicode-diff
      Lists code points where Python's unicodedata and the system libutf8proc disagree on what the
      tokenizer uses (general category, simple lowercase, canonical decomposition).
"""

import argparse
import collections
import ctypes
import ctypes.util
import json
import os
import random
import re
import subprocess
import sys
import unicodedata

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_VOCAB = os.path.join(REPO, "data", "sample", "vocab.txt")
DEFAULT_GOLDEN = os.path.join(REPO, "test", "fixtures", "tokenizer", "bert_uncased_golden.jsonl")
DEFAULT_PAIRS = os.path.join(REPO, "test", "fixtures", "tokenizer", "bert_uncased_pairs.jsonl")
SPECIAL_TOKENS = ["[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"]  # HF's all_special_tokens order
MAX_INPUT_CHARS_PER_WORD = 100


# ---------------------------------------------------------------- character classes (HF semantics)
def is_whitespace(ch):
    if ch in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(ch) == "Zs"


def is_control(ch):
    if ch in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(ch).startswith("C")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_chinese_char(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def split_whitespace(text):
    text = text.strip()
    return text.split() if text else []


# ---------------------------------------------------------------- the tokenizer
class Oracle:
    def __init__(self, vocab_path):
        # HF load_vocab: text mode (universal newlines), rstrip("\n"), later duplicates win.
        self.vocab = collections.OrderedDict()
        with open(vocab_path, "r", encoding="utf-8") as f:
            for index, line in enumerate(f.readlines()):
                self.vocab[line.rstrip("\n")] = index
        for tok in SPECIAL_TOKENS:
            if tok not in self.vocab:
                raise SystemExit(f"{vocab_path}: special token {tok} missing")
        self.unk = "[UNK]"

    # BasicTokenizer.tokenize
    def basic(self, text, never_split):
        out = []
        for ch in text:  # _clean_text
            if ord(ch) == 0 or ord(ch) == 0xFFFD or is_control(ch):
                continue
            out.append(" " if is_whitespace(ch) else ch)
        text = "".join(out)
        out = []
        for ch in text:  # _tokenize_chinese_chars
            out.append(f" {ch} " if is_chinese_char(ord(ch)) else ch)
        text = unicodedata.normalize("NFC", "".join(out))
        pieces = []
        for token in split_whitespace(text):
            if token not in never_split:
                token = token.lower()
                token = "".join(c for c in unicodedata.normalize("NFD", token)
                                if unicodedata.category(c) != "Mn")
            pieces.extend(self.split_on_punc(token, never_split))
        return split_whitespace(" ".join(pieces))

    @staticmethod
    def split_on_punc(token, never_split):
        if token in never_split:
            return [token]
        words, start_new = [], True
        for ch in token:
            if is_punctuation(ch):
                words.append(ch)
                start_new = True
            else:
                if start_new:
                    words.append("")
                start_new = False
                words[-1] += ch
        return words

    # WordpieceTokenizer.tokenize (for one basic token)
    def wordpiece(self, token):
        out = []
        for word in split_whitespace(token):
            chars = list(word)
            if len(chars) > MAX_INPUT_CHARS_PER_WORD:
                out.append(self.unk)
                continue
            pieces, start, bad = [], 0, False
            while start < len(chars):
                end, found = len(chars), None
                while start < end:
                    sub = "".join(chars[start:end])
                    if start > 0:
                        sub = "##" + sub
                    if sub in self.vocab:
                        found = sub
                        break
                    end -= 1
                if found is None:
                    bad = True
                    break
                pieces.append(found)
                start = end
            out.extend([self.unk] if bad else pieces)
        return out

    # PreTrainedTokenizer.tokenize + BertTokenizer._tokenize
    def tokenize(self, text):
        pattern = "(" + "|".join(re.escape(t) for t in SPECIAL_TOKENS) + r")|(.+?)"
        text = re.sub(pattern, lambda m: m.groups()[0] or m.groups()[1].lower(), text)
        tokens = []
        for piece in self.split_specials(text):
            if piece in SPECIAL_TOKENS:
                tokens.append(piece)
                continue
            for token in self.basic(piece, set(SPECIAL_TOKENS)):
                tokens.extend(self.wordpiece(token))  # BasicTokenizer's own never_split is empty
        return tokens

    @staticmethod
    def split_specials(text):
        """Leftmost-longest split around literal special tokens (what HF's Trie.split returns)."""
        pieces, start, i = [], 0, 0
        while i < len(text):
            match = max((t for t in SPECIAL_TOKENS if text.startswith(t, i)), key=len, default=None)
            if match is None:
                i += 1
                continue
            if i > start:
                pieces.append(text[start:i])
            pieces.append(match)
            i += len(match)
            start = i
        if start < len(text):
            pieces.append(text[start:])
        return pieces

    def ids(self, tokens):
        return [self.vocab.get(t, self.vocab[self.unk]) for t in tokens]

    def encode(self, text, max_length=100):
        ids = self.ids(self.tokenize(text))[: max_length - 2]
        return [self.vocab["[CLS]"]] + ids + [self.vocab["[SEP]"]]

    def encode_pair(self, text, text_pair, max_length=100):
        """HF tokenizer(text, text_pair, truncation=True, max_length=...): 'longest_first'."""
        ids, pair_ids = self.ids(self.tokenize(text)), self.ids(self.tokenize(text_pair))
        to_remove = len(ids) + len(pair_ids) + 3 - max_length
        if to_remove > 0:  # tokenization_utils_base.py truncate_sequences, LONGEST_FIRST, right side
            first = min(abs(len(pair_ids) - len(ids)), to_remove)
            second = to_remove - first
            if len(ids) > len(pair_ids):
                ids_cut, pair_cut = first + second // 2, second - second // 2
            else:
                ids_cut, pair_cut = second // 2, first + second - second // 2
            ids = ids[:-ids_cut] if ids_cut > 0 else ids
            pair_ids = pair_ids[:-pair_cut] if pair_cut > 0 else pair_ids
        cls, sep = self.vocab["[CLS]"], self.vocab["[SEP]"]
        input_ids = [cls] + ids + [sep] + pair_ids + [sep]
        return input_ids, [0] * (len(ids) + 2) + [1] * (len(pair_ids) + 1)


# ---------------------------------------------------------------- golden cases
# Outputs published by HF itself (tests and READMEs), quoted in shared/reference/bert-trainer-facts.md
# §2.4. The oracle must reproduce them before any fixture is written.
HF_VERIFIED = [
    ("hf_offsets_special_characters", "A, naïve [MASK] AllenNLP sentence.",
     {"tokens": ["a", ",", "naive", "[MASK]", "allen", "##nl", "##p", "sentence", "."]}),
    ("hf_my_name_is_john", "My name is John", {"ids": [2026, 2171, 2003, 2198]}),
    ("hf_pair", "pair", {"ids": [3940]}),
    ("hf_hello_yall_emoji", "Hello, y'all! How are you 😁 ?",
     {"ids": [7592, 1010, 1061, 1005, 2035, 999, 2129, 2024, 2017, 100, 1029]}),
    ("hf_hello_there", "Hello there, how are you?",
     {"ids": [7592, 2045, 1010, 2129, 2024, 2017, 1029]}),
    ("hf_issue_7648_emoji_first", " 😃 hello how are you",
     {"tokens": ["[UNK]", "hello", "how", "are", "you"]}),
]

# Sentence pairs: (name, text, text_pair, max_length). "hf_pair_my_name_is_john" is HF-published:
# [101, 2026, 2171, 2003, 2198, 102, 3940, 102], token types [0, 0, 0, 0, 0, 0, 1, 1].
PAIR_CASES = [
    ("hf_pair_my_name_is_john", "My name is John", "pair", 100),
    ("pair_no_truncation", "The movie was great!", "Was the movie good?", 100),
    ("pair_first_longer", "one two three four five six seven eight nine ten", "short one", 10),
    ("pair_second_longer", "short one", "one two three four five six seven eight nine ten", 10),
    ("pair_equal_odd_cut", "a b c d e", "f g h i j", 10),
    ("pair_equal_even_cut", "a b c d e", "f g h i j", 9),
    ("pair_empty_first", "", "hello there", 100),
    ("pair_both_empty", "", "", 100),
    ("pair_tight", "unaffable runners", "hello, world!", 5),
]

# (name, text) or (name, bytes) for inputs that are not valid UTF-8 (decoded here with
# errors="replace", which is what a Python caller of HF would have to do; U+FFFD is then dropped).
CASES = [
    ("accents_lower", "Café naïve résumé Ærøskøbing"),
    ("accents_upper", "ÉCOLE ÀÖÜ ÇA VA"),
    ("decomposed_input", "e\u0301cole a\u0308pfel"),
    ("lone_combining_mark", "\u0301 x \u0308\u0301"),
    ("sharp_s", "Straße STRASSE"),
    ("dotted_capital_i", "İstanbul İİ"),
    ("greek_final_sigma", "ΟΔΥΣΣΕΥΣ Καλημέρα κόσμε"),
    ("vietnamese_stacked", "Tiếng Việt có dấu đường"),
    ("polish_no_decomposition", "Łódź żółć"),
    ("cjk_chinese", "我爱北京天安门"),
    ("cjk_mixed_latin", "BERT模型很好用ok"),
    ("cjk_compat_and_ext_b", "\uf900\uf901 \U00020000x"),
    ("japanese_kana_not_spaced", "こんにちは世界、カタカナ"),
    ("korean_hangul_nfd_jamo", "안녕하세요 한국어"),
    ("emoji_alone", "I love it 😍"),
    ("emoji_glued_to_word", "love😍 it😂😂"),
    ("emoji_zwj_family", "👨\u200d👩\u200d👧 family"),
    ("emoji_skin_tone", "👍🏽great"),
    ("emoji_flag", "🇺🇸 usa"),
    ("emoji_variation_selector", "❤️love ❤ love"),
    ("keycap_enclosing_mark", "1\ufe0f\u20e3 one"),
    ("mentions", "@JohnDoe thanks @jane_doe99!"),
    ("hashtags", "#BlackFriday #deals #100DaysOfCode"),
    ("url", "https://www.Example.com/path/to?q=1&x=y#frag"),
    ("email", "john.doe+spam@example.co.uk"),
    ("numbers", "3.14159 1,000,000 2nd 10% $5.99 -42 1e10"),
    ("repeated_punctuation", "Wow!!!??? ...really... --- *** ?!?!"),
    ("ascii_symbols_are_punct", "a$b^c`d+e<f=g>h|i~j"),
    ("unicode_symbols_not_punct", "€50 5€ £ ¥ © ® ° ± × ÷"),
    ("unicode_punctuation", "“quoted” ‘single’ «guillemets» — dash – en … ¿qué? ¡sí!"),
    ("apostrophes", "don't can't I'm y'all it’s"),
    ("hyphens", "state-of-the-art well\u2011known"),
    ("control_chars", "a\x00b\x01c\x7fd\x1be\x85f"),
    ("tab_cr_lf_vt_ff", "line1\tline2\r\nline3\x0bline4\x0cline5"),
    ("nbsp", "hello\u00a0world"),
    ("unicode_spaces", "a\u2003b\u3000c\u202fd\u205fe"),
    ("line_paragraph_separators", "a\u2028b\u2029c"),
    ("zero_width_chars", "zero\u200bwidth\u200cnon\u200djoin\ufeffbom\u2060wj"),
    ("soft_hyphen", "co\u00adoperate"),
    ("mongolian_vowel_separator", "a\u180eb"),
    ("replacement_char", "bad\ufffdchar"),
    ("private_use_and_noncharacter", "\ue000 private \U0010ffff end"),
    ("hash_hash_in_input", "##ing ## # ##"),
    ("special_tokens_in_text", "Hello [MASK] world [SEP] [CLS] [PAD] [UNK]"),
    ("special_tokens_glued", "foo[MASK]bar[UNK]baz[CLS]"),
    ("special_tokens_wrong_case", "[mask] [Mask] [ MASK ] [MASK"),
    ("special_token_broken_by_control", "[MA\x00SK] [\u200bCLS]"),
    ("mixed_scripts", "Москва is Μόσχα in Greek and मॉस्को in Hindi"),
    ("arabic_harakat", "السَّلَامُ عَلَيْكُمْ"),
    ("hebrew_niqqud", "שָׁלוֹם"),
    ("thai", "สวัสดีครับ"),
    ("fullwidth", "ＡＢＣ１２３！"),
    ("compat_not_decomposed", "ﬁne ½ ² ™ H₂O"),
    ("angstrom_kelvin_ohm", "\u212b \u212a \u2126"),
    ("unicode_digits", "٣ ١٢ ௧ ४२"),
    ("elongated_words", "soooooooooo goooood"),
    ("html", "<b>bold</b> &amp; &lt;"),
    ("code", "std::vector<int> x = {1, 2};"),
    ("tweet", "RT @user: OMG!!! This is sooo gooood 😂😂😂 #blessed http://t.co/abc123"),
    ("word_100_chars", "a" * 100),
    ("word_101_chars", "a" * 101),
    ("word_101_chars_then_punct", "ab" * 60 + "!x"),
    ("accented_word_100_chars", "é" * 100),
    ("accented_word_101_chars", "é" * 101),
    ("long_unknown_word", "x" + "q" * 60),
    ("empty", ""),
    ("whitespace_only", "   \t  \u00a0 \u3000 "),
    ("controls_only", "\x00\x01\u200b\ufeff"),
    ("long_sentence_truncation", " ".join(["word"] * 60 + ["the", "end", "of", "it"] * 20)),
    ("invalid_utf8_bytes", b"ok\xff\xfebad\xc3( caf\xc3\xa9 \xed\xa0\x80x \xf0\x9f\x98"),
]


def case_text(value):
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value


# ---------------------------------------------------------------- utf8proc comparison
def load_utf8proc():
    name = ctypes.util.find_library("utf8proc") or "libutf8proc.so.2"
    lib = ctypes.CDLL(name)
    lib.utf8proc_category.restype = ctypes.c_int
    lib.utf8proc_category.argtypes = [ctypes.c_int32]
    lib.utf8proc_tolower.restype = ctypes.c_int32
    lib.utf8proc_tolower.argtypes = [ctypes.c_int32]
    lib.utf8proc_unicode_version.restype = ctypes.c_char_p
    lib.utf8proc_decompose_char.restype = ctypes.c_ssize_t
    lib.utf8proc_decompose_char.argtypes = [ctypes.c_int32, ctypes.POINTER(ctypes.c_int32),
                                            ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
    return lib


# utf8proc_category_t order (utf8proc.h)
UTF8PROC_CATEGORIES = ["Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc",
                       "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp",
                       "Cc", "Cf", "Cs", "Co"]
UTF8PROC_DECOMPOSE = 1 << 3


def unicode_diff(lib):
    """Code points where the two libraries would make the tokenizer behave differently."""
    buf = (ctypes.c_int32 * 8)()
    diffs = []
    for cp in range(0x110000):
        ch = chr(cp)
        py_cat, c_cat = unicodedata.category(ch), UTF8PROC_CATEGORIES[lib.utf8proc_category(cp)]
        py_lower = ch.lower() if cp != 0x130 else "i"  # U+0130 -> "i\u0307"; the U+0307 is Mn, stripped
        c_lower = chr(lib.utf8proc_tolower(cp))
        n = lib.utf8proc_decompose_char(cp, buf, 8, UTF8PROC_DECOMPOSE, None)
        c_nfd = "".join(chr(buf[i]) for i in range(n)) if 0 <= n <= 8 else "?"
        py_nfd = unicodedata.normalize("NFD", ch) if not 0xD800 <= cp <= 0xDFFF else ch
        if py_cat != c_cat or py_lower != c_lower or py_nfd != c_nfd:
            diffs.append((cp, py_cat, c_cat, py_lower != c_lower, py_nfd != c_nfd))
    return diffs


# ---------------------------------------------------------------- commands
def cmd_generate(args):
    oracle = Oracle(args.vocab)
    for name, text, expected in HF_VERIFIED:
        tokens = oracle.tokenize(text)
        got = {"tokens": tokens, "ids": oracle.ids(tokens)}
        for key, want in expected.items():
            if got[key] != want:
                raise SystemExit(f"oracle disagrees with HF on {name}: {key} {got[key]} != {want}")
    lib = load_utf8proc()
    differing = {cp for cp, *_ in unicode_diff(lib)}
    rows = []
    for source, cases in (("hf", [(n, t) for n, t, _ in HF_VERIFIED]), ("oracle", CASES)):
        for name, value in cases:
            text = case_text(value)
            bad = sorted({f"U+{ord(c):04X}" for c in text if ord(c) in differing})
            if bad:
                raise SystemExit(f"case {name} uses {bad}, on which Python {unicodedata.unidata_version} "
                                 f"and utf8proc {lib.utf8proc_unicode_version().decode()} differ")
            tokens = oracle.tokenize(text)
            row = {"name": name, "source": source}
            if isinstance(value, bytes):
                row["text_hex"] = value.hex()
            else:
                row["text"] = text
            row["tokens"] = tokens
            row["ids"] = oracle.ids(tokens)
            rows.append(row)
    names = [r["name"] for r in rows]
    assert len(names) == len(set(names)), "duplicate case names"
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=True) + "\n")
    print(f"wrote {len(rows)} cases to {os.path.relpath(args.out, REPO)} "
          f"(Python unicodedata {unicodedata.unidata_version})")
    hf_ids, hf_types = oracle.encode_pair("My name is John", "pair")
    if (hf_ids, hf_types) != ([101, 2026, 2171, 2003, 2198, 102, 3940, 102], [0] * 6 + [1] * 2):
        raise SystemExit(f"oracle disagrees with HF on the pair case: {hf_ids} {hf_types}")
    with open(args.pairs_out, "w", encoding="utf-8") as f:
        for name, text, text_pair, max_length in PAIR_CASES:
            ids, types = oracle.encode_pair(text, text_pair, max_length)
            f.write(json.dumps({"name": name, "text": text, "text_pair": text_pair,
                                "max_length": max_length, "input_ids": ids,
                                "token_type_ids": types}, ensure_ascii=True) + "\n")
    print(f"wrote {len(PAIR_CASES)} pair cases to {os.path.relpath(args.pairs_out, REPO)}")


def cmd_tokenize(args):
    oracle = Oracle(args.vocab)
    data = sys.stdin.buffer.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for line in lines:
        text = line.decode("utf-8", errors="replace")
        if args.tokens:
            print(" ".join(["[CLS]"] + oracle.tokenize(text)[: args.max_length - 2] + ["[SEP]"]))
        else:
            print(" ".join(map(str, oracle.encode(text, args.max_length))))


def random_text(rng, specials):
    pools = [
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        " \t\r !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
        "éèêëÉÀÖÜçñßøæœłđİıΣσςΑάΩ\u0301\u0308\u0327\u212b\u212a\u1e9e",
        "我爱北京天安门的人有\uf900\U00020000こんにちはカタカナ안녕하세요",
        "😀😍😂👍🏽❤️\u200d\ufe0f🇺🇸\u20e3",
        "\x00\x01\x0b\x0c\x1b\x7f\x85\u00a0\u00ad\u200b\u2028\u2029\u3000\ufeff\ufffd\ue000",
        "“”‘’«»—–…¿¡€£¥©°±×÷¹²½ﬁ™",
    ]
    out = []
    for _ in range(rng.randint(0, 40)):
        r = rng.random()
        if r < 0.05:
            out.append(rng.choice(specials))
        elif r < 0.12:
            cp = rng.randint(0x80, 0x10FFFF)
            if not 0xD800 <= cp <= 0xDFFF:
                out.append(chr(cp))
        elif r < 0.15:
            out.append(rng.choice(["a" * rng.randint(95, 105), "é" * rng.randint(98, 102)]))
        else:
            pool = rng.choices(pools, weights=[60, 15, 8, 6, 4, 4, 3])[0]
            out.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 8))))
    return "".join(out).replace("\n", " ")


def cmd_fuzz(args):
    oracle = Oracle(args.vocab)
    lib = load_utf8proc()
    differing = {cp for cp, *_ in unicode_diff(lib)}
    rng = random.Random(args.seed)
    specials = SPECIAL_TOKENS + ["[mask]", "[MASK", "##", "[CLS][SEP]"]
    texts = []
    while len(texts) < args.count:
        t = random_text(rng, specials)
        if not any(ord(c) in differing for c in t):
            texts.append(t.encode("utf-8"))
    if args.invalid_bytes:  # splice random non-newline bytes in; both sides must drop the bad ones
        for k, t in enumerate(texts):
            for _ in range(rng.randint(0, 4)):
                pos = rng.randint(0, len(t))
                junk = bytes(rng.choice([b for b in range(256) if b != 10]) for _ in range(rng.randint(1, 3)))
                t = t[:pos] + junk + t[pos:]
            texts[k] = t
    texts_raw = texts
    texts = [t.decode("utf-8", errors="replace") for t in texts_raw]
    data = b"".join(t + b"\n" for t in texts_raw)
    mode = ["--tokens"] if args.tokens else []
    if args.invalid_bytes:
        mode += ["--on-invalid-utf8", "replace"]
    proc = subprocess.run([args.binary, "tokenize", "--vocab", args.vocab, "--max-length", "100000"] + mode,
                          input=data, capture_output=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{args.binary} failed: {proc.stderr.decode(errors='replace')}")
    got = proc.stdout.decode("utf-8").split("\n")[:-1]
    mismatches = 0
    for text, line in zip(texts, got):
        tokens = ["[CLS]"] + oracle.tokenize(text) + ["[SEP]"]
        want = " ".join(tokens) if args.tokens else " ".join(map(str, oracle.ids(tokens)))
        if line != want:
            mismatches += 1
            if mismatches <= 5:
                print(f"MISMATCH text={text!r}\n  oracle: {want}\n  c++:    {line}")
    if len(got) != len(texts):
        print(f"line count differs: {len(got)} != {len(texts)}")
        mismatches += 1
    print(f"fuzz: {len(texts)} texts, {mismatches} mismatches (seed {args.seed}, "
          f"{len(differing)} code points excluded as differing between Unicode tables)")
    return 1 if mismatches else 0


def cmd_unicode_diff(args):
    lib = load_utf8proc()
    diffs = unicode_diff(lib)
    print(f"Python unicodedata {unicodedata.unidata_version} vs utf8proc "
          f"{lib.utf8proc_unicode_version().decode()}: {len(diffs)} code points differ")
    ranges = []
    for cp, py_cat, c_cat, lower_diff, nfd_diff in diffs:
        key = (py_cat, c_cat, lower_diff, nfd_diff)
        if ranges and ranges[-1][2] == key and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp, key])
    for lo, hi, (py_cat, c_cat, lower_diff, nfd_diff) in ranges:
        extra = (" lower" if lower_diff else "") + (" nfd" if nfd_diff else "")
        print(f"  U+{lo:04X}..U+{hi:04X}  python {py_cat} / utf8proc {c_cat}{extra}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate")
    gen.add_argument("--vocab", default=DEFAULT_VOCAB)
    gen.add_argument("--out", default=DEFAULT_GOLDEN)
    gen.add_argument("--pairs-out", default=DEFAULT_PAIRS)
    tok = sub.add_parser("tokenize")
    tok.add_argument("--vocab", default=DEFAULT_VOCAB)
    tok.add_argument("--tokens", action="store_true")
    tok.add_argument("--max-length", type=int, default=100)
    fuzz = sub.add_parser("fuzz")
    fuzz.add_argument("--vocab", default=DEFAULT_VOCAB)
    fuzz.add_argument("--binary", required=True)
    fuzz.add_argument("--count", type=int, default=2000)
    fuzz.add_argument("--seed", type=int, default=1)
    fuzz.add_argument("--tokens", action="store_true")
    fuzz.add_argument("--invalid-bytes", action="store_true",
                      help="splice random bytes into the texts (C++ runs --on-invalid-utf8 replace)")
    sub.add_parser("unicode-diff")
    args = parser.parse_args()
    handler = {"generate": cmd_generate, "tokenize": cmd_tokenize, "fuzz": cmd_fuzz,
               "unicode-diff": cmd_unicode_diff}[args.command]
    sys.exit(handler(args) or 0)


if __name__ == "__main__":
    main()
