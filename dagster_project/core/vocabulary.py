"""Words shared by gene-mention extraction (graph/mentions.py) and the query side (retrieval/model/genes.py,
retrieval/question/router.py): one list, so a word that is not a gene when loading is not a gene when asking either."""

# Upper-cased words that are also HGNC symbols or aliases and would otherwise be "mentions" everywhere. Not a stop
# list (that is core/text.py): it names words that collide with genes. Not derived from the stop list either: its
# upper-cased words include HGNC tokens this list lets through (TYPE as a paper mention; IN, OF, AS, DO, IF, ON, UP,
# HE, AM, AN as acronyms a question writes), so deriving it would change what is read as a gene.
_COMMON_WORDS = """
    AND ARE BUT CAN FOR HAS HIS HER ITS NOT NOW OUR OUT THE WAS WHO WHY YES ALL ANY ONE TWO SET MET CAT
    CAR BAD MAX MIN AGE AIM ACT ADD END FIT GAP HIT KIT LAB MAP PAN RAN SAD SAT SEX TAN TIP TOP USE WAR
    WIN ARM EAR LEG CELL CELLS DNA RNA ATP ADP NAD GTP GDP AMP HIV SARS COVID RNAI PCR QPCR MRNA SIRNA
    CRISPR UV WHO SD SE CI OR HR IV II III VI VII IX XI NMR MRI CT PET ECG BMI ICU ER GO NO IMPACT PROBE
    SHE SPINK CLOCK STAR LARGE SMALL ATLAS CAPS CASP MASS PLAY REST SAFE SIGN TANK TRAP WASH CHIP
    """
COMMON_WORDS = frozenset(_COMMON_WORDS.split())
