package probe

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// ValidatorSupport is the part of [Probe] a deploy needs before it sends a
// validator: Validators, CreateKeepsOptions and Keywords (the other
// capabilities are left zero). Like Probe it works in a scratch database
// it drops before returning: nothing is read from or written to db.
func ValidatorSupport(ctx context.Context, db *mongo.Database) (*Capabilities, error) {
	c := &Capabilities{}
	scratch := db.Client().Database(scratchName())
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropTimeout)
		defer cancel()
		_ = scratch.Drop(dctx)
	}()
	var err error
	c.Validators, c.CreateKeepsOptions, err = probeValidators(ctx, scratch, scratchCollection)
	var refused *scratchRefused
	if errors.As(err, &refused) {
		c.Validators, c.CreateKeepsOptions = refused.answer, refused.answer
		c.Keywords = KeywordSupport{Reason: "not probed: " + refused.answer.Reason}
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	if c.Keywords, err = probeKeywords(ctx, scratch, c.Validators); err != nil {
		return nil, err
	}
	return c, nil
}
