"""Futurepedia demo data: a multilingual answers file in the published schema, and RAG runs on it.

Every name, answer and replacement is built from the tables below, in the
track's languages and tasks (leaderboard.tracks.futurepedia), not copies of them.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from ..tracks.futurepedia import LANGS, TASKS
from .common import (
    GENERATORS,
    RETRIEVERS,
    DemoGenerator,
    Submission,
    cap,
    gold_json,
    link,
    rng_for,
    submission_bytes,
    write,
)

TRACK = "futurepedia"


# --------------------------------------------------------------------------- gold

_DEMO_RECORDS, _BENCH_RECORDS = 40, 197

# Name parts in LANGS order (the track's languages: a ninth language needs a ninth column); fr/es/pt/ar put the type first, the adjective last.
_ADJECTIVES = (
    ("Silver", "d'Argent", "de Plata", "de Prata", "银色", "銀色の", "은빛", "الفضي"),
    ("Golden", "Doré", "Dorado", "Dourado", "金色", "黄金の", "황금", "الذهبي"),
    ("Northern", "du Nord", "del Norte", "do Norte", "北方", "北方の", "북부", "الشمالي"),
    ("Crystal", "de Cristal", "de Cristal", "de Cristal", "水晶", "水晶の", "수정", "البلوري"),
    ("Crimson", "Pourpre", "Carmesí", "Carmesim", "深红", "深紅の", "진홍", "القرمزي"),
    ("Ancient", "Ancien", "Antiguo", "Antigo", "古代", "古代の", "고대", "القديم"),
    ("Silent", "Silencieux", "Silencioso", "Silencioso", "寂静", "静寂の", "고요한", "الصامت"),
    ("Radiant", "Radieux", "Radiante", "Radiante", "光辉", "輝く", "빛나는", "المشع"),
    ("Emerald", "d'Émeraude", "Esmeralda", "Esmeralda", "翡翠", "翡翠の", "에메랄드", "الزمردي"),
    ("Eastern", "de l'Est", "del Este", "do Leste", "东方", "東方の", "동부", "الشرقي"),
    ("Hidden", "Caché", "Oculto", "Oculto", "隐秘", "隠れた", "숨겨진", "الخفي"),
    ("Iron", "de Fer", "de Hierro", "de Ferro", "钢铁", "鉄の", "강철", "الحديدي"),
)
_NOUNS = (
    ("River", "du Fleuve", "del Río", "do Rio", "河流", "川", "강", "النهر"),
    ("Mountain", "de la Montagne", "de la Montaña", "da Montanha", "山岳", "山岳", "산악", "الجبل"),
    ("Harbor", "du Port", "del Puerto", "do Porto", "港湾", "港", "항구", "الميناء"),
    ("Forest", "de la Forêt", "del Bosque", "da Floresta", "森林", "森", "숲", "الغابة"),
    ("Star", "de l'Étoile", "de la Estrella", "da Estrela", "星辰", "星", "별", "النجم"),
    ("Ocean", "de l'Océan", "del Océano", "do Oceano", "海洋", "海洋", "바다", "المحيط"),
    ("Valley", "de la Vallée", "del Valle", "do Vale", "山谷", "谷", "계곡", "الوادي"),
    ("Lantern", "de la Lanterne", "de la Linterna", "da Lanterna", "灯笼", "灯籠", "등불", "الفانوس"),
    ("Meadow", "de la Prairie", "de la Pradera", "do Prado", "草原", "草原", "초원", "المرج"),
    ("Island", "de l'Île", "de la Isla", "da Ilha", "岛屿", "島", "섬", "الجزيرة"),
    ("Bridge", "du Pont", "del Puente", "da Ponte", "桥梁", "橋", "다리", "الجسر"),
    ("Garden", "du Jardin", "del Jardín", "do Jardim", "花园", "庭園", "정원", "الحديقة"),
)
_TYPES = (
    ("Network", "Réseau", "Red", "Rede", "网络", "ネットワーク", "네트워크", "شبكة"),
    ("Institute", "Institut", "Instituto", "Instituto", "研究所", "研究所", "연구소", "معهد"),
    ("Orchestra", "Orchestre", "Orquesta", "Orquestra", "管弦乐团", "管弦楽団", "관현악단", "أوركسترا"),
    ("Foundation", "Fondation", "Fundación", "Fundação", "基金会", "財団", "재단", "مؤسسة"),
    ("Company", "Compagnie", "Compañía", "Companhia", "公司", "商会", "회사", "شركة"),
    ("Academy", "Académie", "Academia", "Academia", "学院", "学院", "아카데미", "أكاديمية"),
    ("Observatory", "Observatoire", "Observatorio", "Observatório", "天文台", "天文台", "천문대", "مرصد"),
    ("Festival", "Festival", "Festival", "Festival", "节", "祭", "축제", "مهرجان"),
    ("Museum", "Musée", "Museo", "Museu", "博物馆", "博物館", "박물관", "متحف"),
    ("Library", "Bibliothèque", "Biblioteca", "Biblioteca", "图书馆", "図書館", "도서관", "مكتبة"),
    ("Theatre", "Théâtre", "Teatro", "Teatro", "剧院", "劇場", "극장", "مسرح"),
    ("Gallery", "Galerie", "Galería", "Galeria", "画廊", "画廊", "갤러리", "معرض"),
)
# Replaced answers naming an institute or academy get a campus: a new_ans string with
# ", " inside that must not be split (as "University of California, Berkeley" in the real file).
_CAMPUS = (
    "North Campus",
    "Campus Nord",
    "Campus Norte",
    "Campus Norte",
    "北校区",
    "北キャンパス",
    "북부 캠퍼스",
    "الحرم الشمالي",
)
_CATEGORIES = {  # ten items each, so an answer and its eight replacements can all differ
    "instrument": (
        ("piano", "piano", "piano", "piano", "钢琴", "ピアノ", "피아노", "بيانو"),
        ("violin", "violon", "violín", "violino", "小提琴", "バイオリン", "바이올린", "كمان"),
        ("flute", "flûte", "flauta", "flauta", "长笛", "フルート", "플루트", "ناي"),
        ("harp", "harpe", "arpa", "harpa", "竖琴", "ハープ", "하프", "قيثارة"),
        ("drum", "tambour", "tambor", "tambor", "鼓", "太鼓", "북", "طبل"),
        ("guitar", "guitare", "guitarra", "guitarra", "吉他", "ギター", "기타", "غيتار"),
        ("cello", "violoncelle", "violonchelo", "violoncelo", "大提琴", "チェロ", "첼로", "تشيلو"),
        ("trumpet", "trompette", "trompeta", "trompete", "小号", "トランペット", "트럼펫", "بوق"),
        ("organ", "orgue", "órgano", "órgão", "管风琴", "オルガン", "오르간", "أرغن"),
        ("saxophone", "saxophone", "saxofón", "saxofone", "萨克斯管", "サックス", "색소폰", "ساكسفون"),
    ),
    "metal": (
        ("gold", "or", "oro", "ouro", "金", "金", "금", "ذهب"),
        ("silver", "argent", "plata", "prata", "银", "銀", "은", "فضة"),
        ("copper", "cuivre", "cobre", "cobre", "铜", "銅", "구리", "نحاس"),
        ("iron", "fer", "hierro", "ferro", "铁", "鉄", "철", "حديد"),
        ("tin", "étain", "estaño", "estanho", "锡", "錫", "주석", "قصدير"),
        ("zinc", "zinc", "zinc", "zinco", "锌", "亜鉛", "아연", "زنك"),
        ("lead", "plomb", "plomo", "chumbo", "铅", "鉛", "납", "رصاص"),
        ("nickel", "nickel", "níquel", "níquel", "镍", "ニッケル", "니켈", "نيكل"),
        ("platinum", "platine", "platino", "platina", "铂", "白金", "백금", "بلاتين"),
        ("aluminium", "aluminium", "aluminio", "alumínio", "铝", "アルミニウム", "알루미늄", "ألومنيوم"),
    ),
    "colour": (
        ("red", "rouge", "rojo", "vermelho", "红色", "赤", "빨강", "أحمر"),
        ("blue", "bleu", "azul", "azul", "蓝色", "青", "파랑", "أزرق"),
        ("green", "vert", "verde", "verde", "绿色", "緑", "초록", "أخضر"),
        ("yellow", "jaune", "amarillo", "amarelo", "黄色", "黄色", "노랑", "أصفر"),
        ("black", "noir", "negro", "preto", "黑色", "黒", "검정", "أسود"),
        ("white", "blanc", "blanco", "branco", "白色", "白", "하양", "أبيض"),
        ("purple", "violet", "morado", "roxo", "紫色", "紫", "보라", "أرجواني"),
        ("orange", "orange", "naranja", "laranja", "橙色", "オレンジ", "주황", "برتقالي"),
        ("grey", "gris", "gris", "cinza", "灰色", "灰色", "회색", "رمادي"),
        ("brown", "marron", "marrón", "castanho", "棕色", "茶色", "갈색", "بني"),
    ),
}
_LATIN = frozenset(("en", "fr", "es", "pt"))


def _entity(adj: int, noun: int, type_: int) -> dict[str, str]:
    out = {}
    for i, lang in enumerate(LANGS):
        a, n, t = _ADJECTIVES[adj][i], _NOUNS[noun][i], _TYPES[type_][i]
        if lang == "en":
            out[lang] = f"{a} {n} {t}"
        elif lang in ("zh", "ja"):
            out[lang] = f"{a}{n}{t}"
        elif lang == "ko":
            out[lang] = f"{a} {n} {t}"
        else:
            out[lang] = f"{t} {n} {a}"
    return out


def _item(row: tuple[str, ...]) -> dict[str, str]:
    return {lang: cap(word) if lang in _LATIN else word for lang, word in zip(LANGS, row)}


def _year(year: int) -> dict[str, str]:
    return {lang: f"{year}年" if lang in ("zh", "ja") else f"{year}년" if lang == "ko" else str(year) for lang in LANGS}


def _futurepedia_record(rng: random.Random, rid: int, kind: str) -> dict:
    """One record: an answer in 8 languages and, per document language, a different replaced answer."""
    if kind == "entity":
        # No name part is shared by two answers of a record, so a prediction's
        # 3-grams point at one document's answer (selection entropy needs that).
        parts = zip(*(rng.sample(range(len(table)), 10) for table in (_ADJECTIVES, _NOUNS, _TYPES)))
        answers = []
        for i, (adj, noun, type_) in enumerate(parts):
            name = _entity(adj, noun, type_)
            if i and _TYPES[type_][0] in ("Institute", "Academy"):
                name = {lang: f"{name[lang]}, {_CAMPUS[j]}" for j, lang in enumerate(LANGS)}
            answers.append(name)
    elif kind == "year":
        answers = [_year(y) for y in rng.sample(range(1950, 2021), 10)]
    else:
        rows = list(rng.choice(list(_CATEGORIES.values())))
        rng.shuffle(rows)
        if kind == "single":
            answers = [_item(row) for row in rows]
        else:  # "list": the original answer is "A, B, C", each replacement a JSON list
            ori = [_item(row) for row in rows[:3]]
            answers = [{lang: ", ".join(x[lang] for x in ori) for lang in LANGS}]
            for _ in range(9):
                parts = [_item(row) for row in rng.sample(rows[3:], rng.choice((2, 2, 3)))]
                answers.append({lang: [x[lang] for x in parts] for lang in LANGS})
    new_ans = {doc_lang: answers[1 + i] for i, doc_lang in enumerate(LANGS)}
    if rid == 7:  # an extra document language, as in two published records: loaders must ignore it
        new_ans["de"] = answers[9]
    return {"id": rid, "ori_ans": answers[0], "new_ans": new_ans}


def make_gold(out_dir: Path, seed: int, size: str) -> Path:
    n = _BENCH_RECORDS if size == "bench" else _DEMO_RECORDS
    rng = rng_for(seed, "futurepedia")
    n_list, n_single, n_year = round(n * 0.2), round(n * 0.13), round(n * 0.13)
    kinds = ["list"] * n_list + ["single"] * n_single + ["year"] * n_year
    kinds += ["entity"] * (n - len(kinds))
    rng.shuffle(kinds)
    records = [_futurepedia_record(rng, i, kind) for i, kind in enumerate(kinds)]
    path = out_dir / "demo_answers.json"
    write(path, gold_json(records))
    return path


# --------------------------------------------------------------------------- gold reader, submissions

_ANSWER_TEMPLATES = {
    "en": "The answer is {}.",
    "fr": "La réponse est {}.",
    "es": "La respuesta es {}.",
    "pt": "A resposta é {}.",
    "zh": "答案是{}。",
    "ja": "答えは{}です。",
    "ko": "정답은 {}입니다.",
    "ar": "الإجابة هي {}.",
}


def _listing(lang: str, value: str | list[str]) -> str:
    """A list answer joined the way `lang` lists things; a string as is."""
    return value if isinstance(value, str) else ("、" if lang in ("zh", "ja") else ", ").join(value)


def _say(lang: str, value: str | list[str]) -> str:
    return _ANSWER_TEMPLATES[lang].format(_listing(lang, value))


@dataclass(frozen=True)
class _FuturepediaProfile:
    name: str
    slug: str
    organization: str
    retriever: str
    generator: str
    description: str
    accuracy: dict[str, float]  # chance of the full answer, by query language
    tasks: tuple[str, ...] = TASKS
    cross_factor: float = 0.85  # accuracy multiplier when the document is in another language
    copy_doc: float = 0.1  # chance of answering in the document's language (loose, not strict)
    english: float = 0.0  # chance of answering in English whatever the query language
    trust: dict[str, float] = field(default_factory=dict)  # selection weight by document language (default 1)
    trust_query: float = 1.0  # selection weight of the document in the query language
    breadth: float = 0.3  # chance of naming every document's answer in selection
    mono_doc_lang: bool = True  # write the optional monolingual doc_lang
    ext: str = ".jsonl"

    def system(self) -> dict:
        return {
            "name": self.name,
            "organization": self.organization,
            "retriever": self.retriever,
            "generator": self.generator,
            "link": link(self.slug),
            "description": self.description,
            "top_k": 5,
            "tasks": list(self.tasks),
        }


def _acc(en: float, latin: float, cjk: float, ar: float) -> dict[str, float]:
    return {"en": en, "fr": latin, "es": latin, "pt": latin - 0.02, "zh": cjk, "ja": cjk - 0.03, "ko": cjk - 0.05, "ar": ar}


_FUTUREPEDIA_SYSTEMS = (
    _FuturepediaProfile(
        "PolyRAG-XL: BGE-M3 + Qwen2.5-72B",
        "polyrag-xl",
        "Demo Lab A",
        "BGE-M3",
        "Qwen2.5-72B-Instruct",
        "Strong and balanced across languages; names every source's answer.",
        _acc(0.95, 0.9, 0.84, 0.8),
        cross_factor=0.95,
        copy_doc=0.05,
        breadth=0.75,
    ),
    _FuturepediaProfile(
        "EN-Pivot RAG: mE5 + Llama-3.1-70B",
        "en-pivot-rag",
        "Demo Lab B",
        "multilingual-e5-large",
        "Llama-3.1-70B-Instruct",
        "Translates everything to English; trusts English documents.",
        _acc(0.94, 0.72, 0.45, 0.38),
        cross_factor=0.9,
        english=0.75,
        trust={"en": 12.0},
        breadth=0.05,
        ext=".jsonl.gz",
    ),
    _FuturepediaProfile(
        "mE5 + Llama-3.1-8B",
        "me5-llama-3-1-8b",
        "Demo Lab C",
        "multilingual-e5-base",
        "Llama-3.1-8B-Instruct",
        "Mid-size open pipeline; often echoes the document language.",
        _acc(0.82, 0.7, 0.55, 0.5),
        cross_factor=0.75,
        copy_doc=0.3,
        breadth=0.25,
    ),
    _FuturepediaProfile(
        "Aya Expanse RAG",
        "aya-expanse-rag",
        "Demo Lab D",
        "BGE-M3",
        "aya-expanse-32b",
        "Multilingual generator tuned for Arabic and Korean; prefers documents in the query language.",
        {**_acc(0.85, 0.8, 0.72, 0.85), "ko": 0.8},
        cross_factor=0.85,
        copy_doc=0.1,
        trust_query=4.0,
        breadth=0.35,
        ext=".json",
    ),
    _FuturepediaProfile(
        "BM25 + mT5-base (baseline)",
        "bm25-mt5-base",
        "Demo Baselines",
        "BM25",
        "mT5-base",
        "Lexical baseline with a small seq2seq reader.",
        _acc(0.6, 0.5, 0.3, 0.25),
        cross_factor=0.5,
        copy_doc=0.35,
        breadth=0.1,
        ext=".jsonl.gz",
    ),
    _FuturepediaProfile(
        "Gemma-2-9B monolingual",
        "gemma-2-9b-mono",
        "Demo Lab E",
        "BGE-M3",
        "Gemma-2-9B-it",
        "Monolingual task only (doc_lang omitted, as the contract allows).",
        _acc(0.88, 0.8, 0.62, 0.55),
        tasks=("monolingual",),
        mono_doc_lang=False,
    ),
)


def _read_futurepedia(gold: Path) -> list[dict]:
    # Its own reading of the gold file, not leaderboard.tracks.futurepedia's: predictions
    # built from the scorer's parse (its answer splitting, its language filter) would
    # agree with the scorer even where the scorer misreads the published file.
    path = gold / "demo_answers.json" if gold.is_dir() else gold
    return json.loads(path.read_text(encoding="utf-8"))


def _doc_langs(seed: int, rid: int, query_lang: str) -> list[str]:
    """The selection documents for (id, query language); shared by every system of one seed."""
    rng = rng_for(seed, "futurepedia-doc-langs", rid, query_lang)
    chosen = {query_lang}
    if query_lang != "en" and rng.random() < 0.7:
        chosen.add("en")
    target = rng.choice((2, 3, 3, 4))
    while len(chosen) < target:
        chosen.add(rng.choice(LANGS))
    return [lang for lang in LANGS if lang in chosen]


def _guess(rng: random.Random, record: dict, lang: str, chance: float):
    """The original answer in `lang` with probability `chance`, else part of it or a replaced one."""
    gold = record["ori_ans"][lang]
    roll = rng.random()
    if roll < chance:
        return gold
    parts = gold.split(", ")
    if len(parts) > 1 and roll < chance + 0.15:
        return ", ".join(rng.sample(parts, rng.randint(1, len(parts) - 1)))
    return record["new_ans"][rng.choice(LANGS)][lang]


def _futurepedia_submission(p: _FuturepediaProfile, records: list[dict], seed: int) -> bytes:
    rng = rng_for(seed, "futurepedia-run", p.slug)
    out = []
    for rec in records:
        rid = rec["id"]
        if "monolingual" in p.tasks:
            for lang in LANGS:
                record = {"task": "monolingual", "id": rid, "query_lang": lang}
                if p.mono_doc_lang:
                    record["doc_lang"] = lang
                record["prediction"] = _say(lang, _guess(rng, rec, lang, p.accuracy[lang]))
                out.append(record)
        if "crosslingual" in p.tasks:
            for q in LANGS:
                for d in LANGS:
                    if q == d:
                        continue
                    roll = rng.random()
                    lang = "en" if roll < p.english else d if roll < p.english + p.copy_doc else q
                    pred = _say(lang, _guess(rng, rec, lang, p.accuracy[q] * p.cross_factor))
                    out.append({"task": "crosslingual", "id": rid, "query_lang": q, "doc_lang": d, "prediction": pred})
        if "selection" in p.tasks:
            for q in LANGS:
                docs = _doc_langs(seed, rid, q)
                lang = "en" if rng.random() < p.english else q
                if rng.random() < p.breadth:
                    named = docs
                else:
                    weights = {d: p.trust.get(d, p.trust_query if d == q else 1.0) for d in docs}
                    named = []
                    for _ in range(1 + (rng.random() < 0.3)):
                        pool = [d for d in docs if d not in named]
                        named.append(rng.choices(pool, [weights[d] for d in pool])[0])
                # A document the generator trusts but misreads falls back to the original answer.
                values = [rec["new_ans"][d][lang] if rng.random() < p.accuracy[lang] else rec["ori_ans"][lang] for d in named]
                text = _say(lang, " / ".join(_listing(lang, v) for v in values))
                out.append({"task": "selection", "id": rid, "query_lang": q, "doc_langs": docs, "prediction": text})
    return submission_bytes(TRACK, p.system(), out, p.ext)


def _random_futurepedia_profile(rng: random.Random, i: int, ext: str) -> _FuturepediaProfile:
    tasks = rng.choices((TASKS, ("monolingual",), ("monolingual", "crosslingual")), (7, 2, 1))[0]
    en = rng.uniform(0.6, 0.97)
    return _FuturepediaProfile(
        f"{rng.choice(RETRIEVERS)} + {rng.choice(GENERATORS)} (run {i:04d})",
        f"bench-futurepedia-{i:04d}",
        f"Benchmark Org {i % 37:02d}",
        rng.choice(RETRIEVERS),
        rng.choice(GENERATORS),
        "Synthetic benchmark submission.",
        _acc(en, en - rng.uniform(0, 0.2), en - rng.uniform(0.05, 0.45), en - rng.uniform(0.05, 0.5)),
        tasks=tasks,
        cross_factor=rng.uniform(0.5, 0.95),
        copy_doc=rng.uniform(0, 0.35),
        english=rng.choice((0.0, 0.0, 0.0, rng.uniform(0.3, 0.8))),
        trust={rng.choice(LANGS): rng.uniform(1, 8)},
        breadth=rng.uniform(0, 0.8),
        ext=ext,
    )


# --------------------------------------------------------------------------- the generator


def demo_submissions(gold: Path, seed: int) -> list[Submission]:
    records = _read_futurepedia(gold)
    return [(p.slug + p.ext, _futurepedia_submission(p, records, seed)) for p in _FUTUREPEDIA_SYSTEMS]


def bench_submissions(gold: Path, exts: list[str], rng: random.Random, seed: int) -> list[Submission]:
    records = _read_futurepedia(gold)
    out = []
    for i, ext in enumerate(exts):
        p = _random_futurepedia_profile(rng, i, ext)
        out.append((p.slug + ext, _futurepedia_submission(p, records, seed)))
    return out


GENERATOR = DemoGenerator(
    TRACK,
    make_gold,
    demo_submissions,
    bench_submissions,
    benchmark="Futurepedia",
    gold_layout="`gold/futurepedia/demo_answers.json`: multilingual answers (published schema)",
)
