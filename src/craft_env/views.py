"""Directors' views of a structure (SPEC section 5); see ``craft_env.core.views``."""

from craft_env.core.views import (
    ALL_SEATS,
    DEFAULT_SEATS,
    SEAT_SIDES,
    director_views,
    hidden_cells,
    seat_cells,
    seat_view,
)

__all__ = ["ALL_SEATS", "DEFAULT_SEATS", "SEAT_SIDES", "director_views", "hidden_cells", "seat_cells", "seat_view"]
