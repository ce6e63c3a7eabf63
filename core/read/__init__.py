"""Reading: recorded runs (``traces``: every supported trace format into one ``Trajectory``
each) and datasets (``dataset``: case files validated against the shipped JSON Schema), tied
together by ``intake``."""
