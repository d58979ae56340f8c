def shared_entities_cypher():
    return """MATCH (s:Passage {id: $id})-[:MENTIONS]->(e:Entity)<-[:MENTIONS]-(p:Passage)
WHERE p <> s
RETURN p.id AS passage, count(e) AS shared
ORDER BY shared DESC, passage ASC"""


def bfs_rows(arrivals):
    best = {}  # node -> (hop, score)
    for _seed, node, dist, ann in arrivals:
        hop, score = best.get(node, (dist, ann))
        if dist < hop or (dist == hop and ann > score):
            hop, score = dist, ann
        best[node] = (hop, score)
    return sorted(((v, h, s) for v, (h, s) in best.items()), key=lambda r: (r[1], -r[2], r[0]))


exact_prediction = "no"
