// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package progress

import (
	"reflect"
	"testing"
)

func TestFuncTellsStartsAndEnds(t *testing.T) {
	var got []Event[string, int]
	f := Func[string, int](func(e Event[string, int]) { got = append(got, e) })
	rec := 7
	f.Started(0, 2, "a")
	f.Ended(0, 2, "a", &rec)
	f.Started(1, 2, "b")
	want := []Event[string, int]{
		{Kind: Started, I: 0, N: 2, Step: "a"},
		{Kind: Ended, I: 0, N: 2, Step: "a", Record: &rec},
		{Kind: Started, I: 1, N: 2, Step: "b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestNilFuncIsToldNothing(t *testing.T) {
	var f Func[string, int]
	f.Started(0, 1, "a") // must not panic
	f.Ended(0, 1, "a", nil)
}
