package backfill

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
)

// afterID and upToID are bsonx's (shared with pkg/reshape's walks).
func afterID(id any, ferretDB bool) bson.D { return bsonx.AfterID(id, ferretDB) }
func upToID(id any, ferretDB bool) bson.D  { return bsonx.UpToID(id, ferretDB) }
