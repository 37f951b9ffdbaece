"""Entry point of ``python -m pic_ros``."""

import sys

from pic_ros.tools.cli import main

sys.exit(main())
