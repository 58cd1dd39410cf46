"""`python -m railbird.bench` (`make bench`): the suite of railbird.bench.suite."""

from railbird.bench.suite import main

raise SystemExit(main())
