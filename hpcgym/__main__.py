from hpcgym.cli import main

raise SystemExit(main())
