"""kcca_desc: classical kernel-CCA image-sentence ranking (Hodosh, Young & Hockenmaier 2013)."""

__version__ = "0.1.0"
