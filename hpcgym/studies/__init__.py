"""The papers' studies, one module each (tsafrir2007, hariharan, galleguillos2017,
galleguillos2019); the runs both Eurora studies make (:mod:`hpcgym.studies.eurora_runs`);
the names ``hpcgym study`` and ``hpcgym reproduce`` know (:mod:`hpcgym.studies.registry`)."""
