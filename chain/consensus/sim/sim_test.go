package sim

import (
	"testing"
)

func TestFaultFree(t *testing.T) {
	res, err := Run(Config{Seed: 1, HealAt: 1, Ticks: 300})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
}
