package heapx

import (
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats/heapprofile"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/sourcemaps"
)

// OpenProfile reads the sampling heap profile at path (.heapprofile, plain
// or gzip-compressed: heapx capture --sampling, node --heap-prof,
// DevTools' "Allocation sampling") and returns it with the Resolver of its
// positions, for query.ProfileSites. The positions name their scripts:
// unless opts.NoSourceMaps, the scripts' source maps (found as a dump's
// are; what goes wrong is told to opts.Warn) give the profile's functions
// their names, and the Resolver maps positions to the sources. Of opts it
// uses NoSourceMaps and Warn.
func OpenProfile(path string, opts Options) (*model.SamplingProfile, *analysis.Resolver, error) {
	p, err := heapprofile.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	res := analysis.NewResolver(nil)
	if !opts.NoSourceMaps {
		maps := sourcemaps.ForDump(path, nil, opts.Warn)
		sourcemaps.RenameProfile(p, maps)
		res.SetMapper(maps)
	}
	return p, res, nil
}
