"""HTEB's dataset definitions (v1.1), as far as shiftbench needs them: the MTEB task each
is, its Hub dataset and revision, and how HTEB reads it. core/data/hteb.py gives them
with the rules of HTEB's files."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HtebDataset:
    """One of HTEB's dataset definitions, as far as shiftbench needs it."""

    task: str  # the MTEB task shiftbench loads for it
    task_type: str  # HTEB's task type
    hf_dataset: str
    revision: str | None = None
    # a clustering dataset's layout: flat (a text per record), nested (a set of texts per
    # record) or per_language (a text per record, clustered per `language`)
    clustering_format: str | None = None
    # the configs HTEB reads one after another (its language_configs), each record's
    # `language` naming its own: a subset each (core/data/hteb_sets.py)
    languages: tuple[str, ...] = ()
    # HTEB's eval_split where the MTEB task scores more than one (its first otherwise)
    eval_split: str | None = None


# HTEB's dataset names (its dataset_metadata folder) and the MTEB tasks they are
DATASETS = {
    "banking77": HtebDataset(
        "Banking77Classification", "classification", "mteb/banking77",
        "18072d2685ea682290f7b8924d94c62acc19c0b2",
    ),
    "stsbenchmark-sts": HtebDataset(
        "STSBenchmark", "sts", "mteb/stsbenchmark-sts", "96943a16ea6a35129e253c659081cb59daf81b30"
    ),
    "biosses-sts": HtebDataset(
        "BIOSSES", "sts", "mteb/biosses-sts", "f4f1265a7a4b0c99e6da09859b887bdb1f36d8ed"
    ),
    # SummEval's data, under the mteb task that scores it with mteb's current metric
    "summeval": HtebDataset(
        "SummEvalSummarization.v2", "summarisation", "mteb/summeval",
        "bfc121155064afa2d81b5505682ffc0d96f4334c",
    ),
    "SciDocsRR": HtebDataset(
        "SciDocsRR", "reranking", "mteb/SciDocsRR", "0b22f42ce7f91639d986f17db6315a913e52e50e"
    ),
    "StackOverflowDupQuestions": HtebDataset(
        "StackOverflowDupQuestions", "reranking", "mteb/stackoverflowdupquestions-reranking",
        "ef807ea29a75ec4f91b50fd4191cb4ee4589a9f9",
    ),
    "askubuntudupquestions-reranking": HtebDataset(
        "AskUbuntuDupQuestions", "reranking", "mteb/askubuntudupquestions-reranking",
        "4d853f94cd57d85ec13805aeeac3ae3e5eb4c49c",
    ),
    "SprintDuplicateQuestions": HtebDataset(
        "SprintDuplicateQuestions", "pair_classification",
        "mteb/sprintduplicatequestions-pairclassification",
        "58edec77c9d5106bf6070489e9c0a73c69b6c4c0",
    ),
    "twittersemeval2015-pairclassification": HtebDataset(
        "TwitterSemEval2015", "pair_classification", "mteb/twittersemeval2015-pairclassification",
        "d889b7b15e83d5d1352d74c387a9da926a3e6b77",
    ),
    "TwitterURLCorpus": HtebDataset(
        "TwitterURLCorpus", "pair_classification", "mteb/twitterurlcorpus-pairclassification",
        "ee5d15331196ec9f72e8393779b20098c10e29f6",
    ),
    "AmazonCounterfactualClassification": HtebDataset(
        "AmazonCounterfactualClassification", "classification", "mteb/amazon_counterfactual",
        "b9867e02b01002698f60c07fb8efdce8c5020ee8",
        languages=("en",), eval_split="test",  # HTEB reads mteb's "en" test split alone
    ),
    "MassiveIntentClassification": HtebDataset(
        "MassiveIntentClassification", "classification", "mteb/amazon_massive_intent",
        "940fd47a81eaa7f2cc7b129674d945d618ac38c2",
        languages=("en",), eval_split="test",  # HTEB reads mteb's "en" test split alone
    ),
    "BiorxivClusteringS2S": HtebDataset(
        "BiorxivClusteringS2S", "clustering", "mteb/biorxiv-clustering-s2s",
        "7e96ee33e0fbd2cb6051549dfe7637b7e46df820", clustering_format="nested",
    ),
    "MedrxivClusteringS2S": HtebDataset(
        "MedrxivClusteringS2S", "clustering", "mteb/medrxiv-clustering-s2s",
        "47be1a928ff641bb7dbc0e4e0c5af8363bda796c", clustering_format="nested",
    ),
    "TwentyNewsgroupsClustering": HtebDataset(
        "TwentyNewsgroupsClustering", "clustering", "mteb/twentynewsgroups-clustering",
        "726b531f19733d606fd4abedff37afe05c3708fe", clustering_format="nested",
    ),
    # HTEB's retrieval datasets (core/data/hteb_retrieval.py)
    "arguana": HtebDataset(
        "ArguAna", "retrieval", "mteb/arguana", "6c1bcf74b13dfd823aff056b79d4d93e702f19c7"
    ),
    "SciFact": HtebDataset(
        "SciFact", "retrieval", "mteb/scifact", "cf10ab6856b15b0e670ef8ae5dae4e266c12d035"
    ),
    "CQADupstackGamingRetrieval": HtebDataset(
        "CQADupstackGamingRetrieval", "retrieval", "mteb/cqadupstack-gaming",
        "1c9769860b1d666aae049c6ba60d76ecb244253e",
    ),
    "Ko-StrategyQA": HtebDataset(
        "Ko-StrategyQA", "retrieval", "mteb/Ko-StrategyQA",
        "315b000dfa35ba4713d2a266d204e68f8ac80687",
    ),
    "TwitterHjerneRetrieval": HtebDataset(
        "TwitterHjerneRetrieval", "retrieval", "mteb/TwitterHjerneRetrieval",
        "97ad55673cf9746f8e4b3aaa92b1bb92d82e52db",
    ),
    # from HTEB's multilingual group
    "MasakhaNEWSClusteringS2S": HtebDataset(
        "MasakhaNEWSClusteringS2S", "clustering", "mteb/MasakhaNEWSClusteringS2S",
        "c4724b56a0ca58f2da7e3eb415726d04952e3965", clustering_format="per_language",
    ),
    "NamaaMrTydiReranking": HtebDataset(
        "NamaaMrTydiReranking", "reranking", "mteb/NamaaMrTydiReranking",
        "ecf1ff8c18469251bfe6acf1219e63e287bbb037",
    ),
    "VoyageMMarcoReranking": HtebDataset(
        "VoyageMMarcoReranking", "reranking", "mteb/VoyageMMarcoReranking",
        "aa3e01884f561ba47abc3c118af3a9792303c5e8",
    ),
    "IndicCrosslingualSTS": HtebDataset(
        "IndicCrosslingualSTS", "sts", "mteb/IndicCrosslingualSTS",
        "c4d2c4d658ff6dbf1d373d44cc558c9f1bb16f52",
        languages=("en-as", "en-bn", "en-gu", "en-hi", "en-kn", "en-ml", "en-mr", "en-or",
                   "en-pa", "en-ta", "en-te", "en-ur"),
    ),
    "IsiZuluNewsClassification.v2": HtebDataset(
        "IsiZuluNewsClassification.v2", "classification", "mteb/isi_zulu_news",
        "45708aaaf9c6133227ea5db5cf26571facb9ccdb",
    ),
    "PlscClusteringS2S.v2": HtebDataset(
        "PlscClusteringS2S.v2", "clustering", "mteb/PlscClusteringS2S.v2",
        "4f99ae4f8fc9a1074c7483d9e042fb18314261a3", clustering_format="nested",
    ),
    "SentimentAnalysisHindi.v2": HtebDataset(
        "SentimentAnalysisHindi.v2", "classification", "mteb/sentiment_analysis_hindi",
        "27fc099ce1c5a7295b9231e53a37648cdef6cb79",
    ),
    "indonli": HtebDataset(
        "indonli", "pair_classification", "mteb/indonli",
        "35fe7d5cb2d7e7259184a3afe739190c1655381f",
    ),
    "rte3": HtebDataset(
        "RTE3", "pair_classification", "mteb/rte3", "54ea0052267265f4906dd77b0a3d041d301a5ee6",
        languages=("de", "en", "fr", "it"),
    ),
    "semrel2024": HtebDataset(
        "SemRel24STS", "str", "SemRel/SemRel2024", "ef5c383d1b87eb8feccde3dfb7f95e42b1b050dd",
        languages=("afr", "amh", "arb", "arq", "ary", "eng", "esp", "hau", "hin", "ind", "kin",
                   "mar", "pan", "tel"),
    ),
    "sts17-crosslingual-sts": HtebDataset(
        "STS17", "sts", "mteb/sts17-crosslingual-sts", "bb1de64ee6fd9ccd66e0bdbadcafe990f652d887",
        languages=("ar-ar", "en-ar", "en-de", "en-en", "en-tr", "es-en", "es-es", "fr-en",
                   "it-en", "nl-en", "ko-ko"),
    ),
}  # fmt: skip
