"""Source releases: each release's facts kept side by side (store), what changed between two of them (diff), and
the churn gates that stop a release that looks broken (gates)."""
