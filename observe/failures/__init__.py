"""The failure vocabulary: every failure kind (`kinds`), which engine errors are a crash
(`crashes`), shutdown noise (`shutdown`), and the detectors of an engine that died (`failing`) or
wedged (`stuck`)."""
