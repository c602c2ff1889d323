package main

import (
	"errors"
	"fmt"
)

// parseExperts returns E, U, the ids and the routing's name ("ids" for --ids) of
// --experts, --routing and --ids for M tokens (routeIDs for a routing, with the data's
// seed); set holds the flags given. check and trace share it.
func parseExperts(experts, routing, idsFlag string, set map[string]bool, seed uint64, M int) (E, U int, ids []int32, name string, err error) {
	e, err := parseInts(experts, -1)
	if err != nil || len(e) > 2 {
		return 0, 0, nil, "", fmt.Errorf("--experts %q: want E,U", experts)
	}
	E, U = int(e[0]), 1
	if len(e) == 2 {
		U = int(e[1])
	}
	if E < 1 || U < 1 || U > E || E > 1024 {
		return 0, 0, nil, "", fmt.Errorf("--experts %q: want 1 <= U <= E <= 1024", experts)
	}
	if idsFlag == "" {
		if ids, err = routeIDs(routing, seed, E, U, M); err != nil {
			return 0, 0, nil, "", fmt.Errorf("--routing: %w", err)
		}
		return E, U, ids, routing, nil
	}
	if set["routing"] {
		return 0, 0, nil, "", errors.New("give --routing or --ids, not both")
	}
	iv, err := parseInts(idsFlag, -1)
	if err != nil || len(iv) != M*U {
		return 0, 0, nil, "", fmt.Errorf("--ids %q: want %d integers (M=%d tokens times U=%d)", idsFlag, M*U, M, U)
	}
	for _, x := range iv {
		if x < 0 || x >= int64(E) {
			return 0, 0, nil, "", fmt.Errorf("--ids: expert %d outside [0, %d)", x, E)
		}
		ids = append(ids, int32(x))
	}
	return E, U, ids, "ids", nil
}
